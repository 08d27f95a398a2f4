// AlterPartitionReassignments (API key 45): Moves partitions' replicas to other brokers, or cancels a move.
import { field as f, type ApiDef } from '../schema/definition.js';

export const AlterPartitionReassignments = {
  apiKey: 45,
  name: 'AlterPartitionReassignments',
  request: {
    apiKey: 45,
    kind: 'request',
    name: 'AlterPartitionReassignmentsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('TimeoutMs', 'int32', '0+', { default: 60000 }),
      f('Topics', '[]ReassignableTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]ReassignablePartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('Replicas', '[]int32', '0+', { nullableVersions: '0+', default: null }),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 45,
    kind: 'response',
    name: 'AlterPartitionReassignmentsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      f('Responses', '[]ReassignableTopicResponse', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]ReassignablePartitionResponse', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
