// ShareGroupHeartbeat (API key 76): a share group member's join, heartbeat and leave (KIP-932).
import { field as f, struct, type ApiDef } from '../schema/definition.js';

export const ShareGroupHeartbeat = {
  apiKey: 76,
  name: 'ShareGroupHeartbeat',
  request: {
    apiKey: 76,
    kind: 'request',
    name: 'ShareGroupHeartbeatRequest',
    validVersions: '1',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('MemberId', 'string', '0+'),
      f('MemberEpoch', 'int32', '0+'),
      f('RackId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('SubscribedTopicNames', '[]string', '0+', { nullableVersions: '0+', default: null }),
    ],
  },
  response: {
    apiKey: 76,
    kind: 'response',
    name: 'ShareGroupHeartbeatResponse',
    validVersions: '1',
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
