// ListOffsets (API key 2): Finds offsets by timestamp: earliest, latest, max timestamp or a given time.
import { field as f, type ApiDef } from '../schema/definition.js';

export const ListOffsets = {
  apiKey: 2,
  name: 'ListOffsets',
  request: {
    apiKey: 2,
    kind: 'request',
    name: 'ListOffsetsRequest',
    validVersions: '0-10',
    flexibleVersions: '6+',
    fields: [
      f('ReplicaId', 'int32', '0+'),
      f('IsolationLevel', 'int8', '2+'),
      f('Topics', '[]ListOffsetsTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]ListOffsetsPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('CurrentLeaderEpoch', 'int32', '4+', { default: -1, ignorable: true }),
          f('Timestamp', 'int64', '0+'),
          f('MaxNumOffsets', 'int32', '0', { default: 1 }),
        ]),
      ]),
      f('TimeoutMs', 'int32', '10+', { ignorable: true }),
    ],
  },
  response: {
    apiKey: 2,
    kind: 'response',
    name: 'ListOffsetsResponse',
    validVersions: '0-10',
    flexibleVersions: '6+',
    fields: [
      f('ThrottleTimeMs', 'int32', '2+', { ignorable: true }),
      f('Topics', '[]ListOffsetsTopicResponse', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]ListOffsetsPartitionResponse', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('OldStyleOffsets', '[]int64', '0'),
          f('Timestamp', 'int64', '1+', { default: -1n }),
          f('Offset', 'int64', '1+', { default: -1n }),
          f('LeaderEpoch', 'int32', '4+', { default: -1 }),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
