// OffsetForLeaderEpoch (API key 23): Finds the end offset of a leader epoch, for log truncation checks.
import { field as f, type ApiDef } from '../schema/definition.js';

export const OffsetForLeaderEpoch = {
  apiKey: 23,
  name: 'OffsetForLeaderEpoch',
  request: {
    apiKey: 23,
    kind: 'request',
    name: 'OffsetForLeaderEpochRequest',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      f('ReplicaId', 'int32', '3+', { default: -2, ignorable: true }),
      f('Topics', '[]OffsetForLeaderTopic', '0+', {}, [
        f('Topic', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]OffsetForLeaderPartition', '0+', {}, [
          f('Partition', 'int32', '0+'),
          f('CurrentLeaderEpoch', 'int32', '2+', { default: -1, ignorable: true }),
          f('LeaderEpoch', 'int32', '0+'),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 23,
    kind: 'response',
    name: 'OffsetForLeaderEpochResponse',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      f('ThrottleTimeMs', 'int32', '2+', { ignorable: true }),
      f('Topics', '[]OffsetForLeaderTopicResult', '0+', {}, [
        f('Topic', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]EpochEndOffset', '0+', {}, [
          f('ErrorCode', 'int16', '0+'),
          f('Partition', 'int32', '0+'),
          f('LeaderEpoch', 'int32', '1+', { default: -1, ignorable: true }),
          f('EndOffset', 'int64', '0+', { default: -1n }),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
