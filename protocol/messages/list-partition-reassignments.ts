// ListPartitionReassignments (API key 46): Lists the partition moves in progress.
import { field as f, type ApiDef } from '../schema/definition.js';

export const ListPartitionReassignments = {
  apiKey: 46,
  name: 'ListPartitionReassignments',
  request: {
    apiKey: 46,
    kind: 'request',
    name: 'ListPartitionReassignmentsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('TimeoutMs', 'int32', '0+', { default: 60000 }),
      f('Topics', '[]ListPartitionReassignmentsTopics', '0+', { nullableVersions: '0+', default: null }, [
        f('Name', 'string', '0+'),
        f('PartitionIndexes', '[]int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 46,
    kind: 'response',
    name: 'ListPartitionReassignmentsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      f('Topics', '[]OngoingTopicReassignment', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]OngoingPartitionReassignment', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('Replicas', '[]int32', '0+'),
          f('AddingReplicas', '[]int32', '0+'),
          f('RemovingReplicas', '[]int32', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
