// DescribeTopicPartitions (API key 75): Describes topics and partitions with cursor-based paging.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeTopicPartitions = {
  apiKey: 75,
  name: 'DescribeTopicPartitions',
  request: {
    apiKey: 75,
    kind: 'request',
    name: 'DescribeTopicPartitionsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('Topics', '[]TopicRequest', '0+', {}, [
        f('Name', 'string', '0+'),
      ]),
      f('ResponsePartitionLimit', 'int32', '0+', { default: 2000 }),
      f('Cursor', 'Cursor', '0+', { nullableVersions: '0+', default: null }, [
        f('TopicName', 'string', '0+'),
        f('PartitionIndex', 'int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 75,
    kind: 'response',
    name: 'DescribeTopicPartitionsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+', { ignorable: true }),
      f('Topics', '[]DescribeTopicPartitionsResponseTopic', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('Name', 'string', '0+', { nullableVersions: '0+', mapKey: true }),
        f('TopicId', 'uuid', '0+', { ignorable: true }),
        f('IsInternal', 'bool', '0+', { default: false, ignorable: true }),
        f('Partitions', '[]DescribeTopicPartitionsResponsePartition', '0+', {}, [
          f('ErrorCode', 'int16', '0+'),
          f('PartitionIndex', 'int32', '0+'),
          f('LeaderId', 'int32', '0+'),
          f('LeaderEpoch', 'int32', '0+', { default: -1, ignorable: true }),
          f('ReplicaNodes', '[]int32', '0+'),
          f('IsrNodes', '[]int32', '0+'),
          f('EligibleLeaderReplicas', '[]int32', '0+', { nullableVersions: '0+', default: null }),
          f('LastKnownElr', '[]int32', '0+', { nullableVersions: '0+', default: null }),
          f('OfflineReplicas', '[]int32', '0+', { ignorable: true }),
        ]),
        f('TopicAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
      ]),
      f('NextCursor', 'Cursor', '0+', { nullableVersions: '0+', default: null }, [
        f('TopicName', 'string', '0+'),
        f('PartitionIndex', 'int32', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
