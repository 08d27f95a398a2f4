// OffsetFetch (API key 9): Reads a consumer group's committed positions.
import { field as f, type ApiDef } from '../schema/definition.js';

export const OffsetFetch = {
  apiKey: 9,
  name: 'OffsetFetch',
  request: {
    apiKey: 9,
    kind: 'request',
    name: 'OffsetFetchRequest',
    validVersions: '0-9',
    flexibleVersions: '6+',
    fields: [
      f('GroupId', 'string', '0-7'),
      f('Topics', '[]OffsetFetchRequestTopic', '0-7', { nullableVersions: '2-7' }, [
        f('Name', 'string', '0-7'),
        f('PartitionIndexes', '[]int32', '0-7'),
      ]),
      f('Groups', '[]OffsetFetchRequestGroup', '8+', {}, [
        f('GroupId', 'string', '8+'),
        f('MemberId', 'string', '9+', { nullableVersions: '9+', default: null, ignorable: true }),
        f('MemberEpoch', 'int32', '9+', { default: -1, ignorable: true }),
        f('Topics', '[]OffsetFetchRequestTopics', '8+', { nullableVersions: '8+' }, [
          f('Name', 'string', '8+'),
          f('PartitionIndexes', '[]int32', '8+'),
        ]),
      ]),
      f('RequireStable', 'bool', '7+', { default: false }),
    ],
  },
  response: {
    apiKey: 9,
    kind: 'response',
    name: 'OffsetFetchResponse',
    validVersions: '0-9',
    flexibleVersions: '6+',
    fields: [
      f('ThrottleTimeMs', 'int32', '3+', { ignorable: true }),
      f('Topics', '[]OffsetFetchResponseTopic', '0-7', {}, [
        f('Name', 'string', '0-7'),
        f('Partitions', '[]OffsetFetchResponsePartition', '0-7', {}, [
          f('PartitionIndex', 'int32', '0-7'),
          f('CommittedOffset', 'int64', '0-7'),
          f('CommittedLeaderEpoch', 'int32', '5-7', { default: -1, ignorable: true }),
          f('Metadata', 'string', '0-7', { nullableVersions: '0-7' }),
          f('ErrorCode', 'int16', '0-7'),
        ]),
      ]),
      f('ErrorCode', 'int16', '2-7', { default: 0, ignorable: true }),
      f('Groups', '[]OffsetFetchResponseGroup', '8+', {}, [
        f('GroupId', 'string', '8+'),
        f('Topics', '[]OffsetFetchResponseTopics', '8+', {}, [
          f('Name', 'string', '8+'),
          f('Partitions', '[]OffsetFetchResponsePartitions', '8+', {}, [
            f('PartitionIndex', 'int32', '8+'),
            f('CommittedOffset', 'int64', '8+'),
            f('CommittedLeaderEpoch', 'int32', '8+', { default: -1, ignorable: true }),
            f('Metadata', 'string', '8+', { nullableVersions: '8+' }),
            f('ErrorCode', 'int16', '8+'),
          ]),
        ]),
        f('ErrorCode', 'int16', '8+', { default: 0 }),
      ]),
    ],
  },
} satisfies ApiDef;
