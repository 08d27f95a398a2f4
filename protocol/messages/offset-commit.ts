// OffsetCommit (API key 8): Stores a consumer group's positions.
import { field as f, type ApiDef } from '../schema/definition.js';

export const OffsetCommit = {
  apiKey: 8,
  name: 'OffsetCommit',
  request: {
    apiKey: 8,
    kind: 'request',
    name: 'OffsetCommitRequest',
    validVersions: '0-9',
    flexibleVersions: '8+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('GenerationIdOrMemberEpoch', 'int32', '1+', { default: -1, ignorable: true }),
      f('MemberId', 'string', '1+', { ignorable: true }),
      f('GroupInstanceId', 'string', '7+', { nullableVersions: '7+', default: null }),
      f('RetentionTimeMs', 'int64', '2-4', { default: -1n, ignorable: true }),
      f('Topics', '[]OffsetCommitRequestTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]OffsetCommitRequestPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('CommittedOffset', 'int64', '0+'),
          f('CommittedLeaderEpoch', 'int32', '6+', { default: -1, ignorable: true }),
          f('CommitTimestamp', 'int64', '1', { default: -1n }),
          f('CommittedMetadata', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 8,
    kind: 'response',
    name: 'OffsetCommitResponse',
    validVersions: '0-9',
    flexibleVersions: '8+',
    fields: [
      f('ThrottleTimeMs', 'int32', '3+', { ignorable: true }),
      f('Topics', '[]OffsetCommitResponseTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]OffsetCommitResponsePartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
