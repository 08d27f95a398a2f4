// DescribeShareGroupOffsets (API key 90): each share-partition's start offset and lag (KIP-932; kafka-share-groups.sh --describe).
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeShareGroupOffsets = {
  apiKey: 90,
  name: 'DescribeShareGroupOffsets',
  request: {
    apiKey: 90,
    kind: 'request',
    name: 'DescribeShareGroupOffsetsRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('Groups', '[]DescribeShareGroupOffsetsRequestGroup', '0+', {}, [
        f('GroupId', 'string', '0+'),
        f('Topics', '[]DescribeShareGroupOffsetsRequestTopic', '0+', { nullableVersions: '0+' }, [
          f('TopicName', 'string', '0+'),
          f('Partitions', '[]int32', '0+'),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 90,
    kind: 'response',
    name: 'DescribeShareGroupOffsetsResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Groups', '[]DescribeShareGroupOffsetsResponseGroup', '0+', {}, [
        f('GroupId', 'string', '0+'),
        f('Topics', '[]DescribeShareGroupOffsetsResponseTopic', '0+', {}, [
          f('TopicName', 'string', '0+'),
          f('TopicId', 'uuid', '0+'),
          f('Partitions', '[]DescribeShareGroupOffsetsResponsePartition', '0+', {}, [
            f('PartitionIndex', 'int32', '0+'),
            f('StartOffset', 'int64', '0+'),
            f('LeaderEpoch', 'int32', '0+'),
            f('Lag', 'int64', '1+', { ignorable: true, default: -1n }),
            f('ErrorCode', 'int16', '0+'),
            f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
          ]),
        ]),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      ]),
    ],
  },
} satisfies ApiDef;
