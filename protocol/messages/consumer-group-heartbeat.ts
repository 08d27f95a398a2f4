// ConsumerGroupHeartbeat (API key 68): The next-generation consumer group protocol's heartbeat (KIP-848).
import { field as f, struct, type ApiDef } from '../schema/definition.js';

export const ConsumerGroupHeartbeat = {
  apiKey: 68,
  name: 'ConsumerGroupHeartbeat',
  request: {
    apiKey: 68,
    kind: 'request',
    name: 'ConsumerGroupHeartbeatRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('MemberId', 'string', '0+'),
      f('MemberEpoch', 'int32', '0+'),
      f('InstanceId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('RackId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('RebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
      f('SubscribedTopicNames', '[]string', '0+', { nullableVersions: '0+', default: null }),
      f('SubscribedTopicRegex', 'string', '1+', { nullableVersions: '1+', default: null }),
      f('ServerAssignor', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('TopicPartitions', '[]TopicPartitions', '0+', { nullableVersions: '0+', default: null }, [
        f('TopicId', 'uuid', '0+'),
        f('Partitions', '[]int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 68,
    kind: 'response',
    name: 'ConsumerGroupHeartbeatResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('MemberId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('MemberEpoch', 'int32', '0+'),
      f('HeartbeatIntervalMs', 'int32', '0+'),
      f('Assignment', 'Assignment', '0+', { nullableVersions: '0+', default: null }, [
        f('TopicPartitions', '[]TopicPartitions', '0+'),
      ]),
    ],
    commonStructs: [
      struct('TopicPartitions', '0+', [
        f('TopicId', 'uuid', '0+'),
        f('Partitions', '[]int32', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
