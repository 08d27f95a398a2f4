// StreamsGroupHeartbeat (API key 88): Kafka Streams' group protocol (KIP-1071): members send their topology and the tasks they own, the coordinator assigns tasks.
import { field as f, struct, type ApiDef } from '../schema/definition.js';

const taskIds = struct('TaskIds', '0+', [
  f('SubtopologyId', 'string', '0+'),
  f('Partitions', '[]int32', '0+'),
]);
const endpoint = struct('Endpoint', '0+', [
  f('Host', 'string', '0+'),
  f('Port', 'uint16', '0+'),
]);

export const StreamsGroupHeartbeat = {
  apiKey: 88,
  name: 'StreamsGroupHeartbeat',
  request: {
    apiKey: 88,
    kind: 'request',
    name: 'StreamsGroupHeartbeatRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('MemberId', 'string', '0+'),
      f('MemberEpoch', 'int32', '0+'),
      f('EndpointInformationEpoch', 'int32', '0+'),
      f('InstanceId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('RackId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('RebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
      f('Topology', 'Topology', '0+', { nullableVersions: '0+', default: null }, [
        f('Epoch', 'int32', '0+'),
        f('Subtopologies', '[]Subtopology', '0+', {}, [
          f('SubtopologyId', 'string', '0+'),
          f('SourceTopics', '[]string', '0+'),
          f('SourceTopicRegex', '[]string', '0+'),
          f('StateChangelogTopics', '[]TopicInfo', '0+'),
          f('RepartitionSinkTopics', '[]string', '0+'),
          f('RepartitionSourceTopics', '[]TopicInfo', '0+'),
          f('CopartitionGroups', '[]CopartitionGroup', '0+', {}, [
            f('SourceTopics', '[]int16', '0+'),
            f('SourceTopicRegex', '[]int16', '0+'),
            f('RepartitionSourceTopics', '[]int16', '0+'),
          ]),
        ]),
      ]),
      f('ActiveTasks', '[]TaskIds', '0+', { nullableVersions: '0+', default: null }),
      f('StandbyTasks', '[]TaskIds', '0+', { nullableVersions: '0+', default: null }),
      f('WarmupTasks', '[]TaskIds', '0+', { nullableVersions: '0+', default: null }),
      f('ProcessId', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('UserEndpoint', 'Endpoint', '0+', { nullableVersions: '0+', default: null }),
      f('ClientTags', '[]KeyValue', '0+', { nullableVersions: '0+', default: null }),
      f('TaskOffsets', '[]TaskOffset', '0+', { nullableVersions: '0+', default: null }),
      f('TaskEndOffsets', '[]TaskOffset', '0+', { nullableVersions: '0+', default: null }),
      f('ShutdownApplication', 'bool', '0+', { default: false }),
    ],
    commonStructs: [
      struct('KeyValue', '0+', [
        f('Key', 'string', '0+'),
        f('Value', 'string', '0+'),
      ]),
      struct('TopicInfo', '0+', [
        f('Name', 'string', '0+'),
        f('Partitions', 'int32', '0+'),
        f('ReplicationFactor', 'int16', '0+'),
        f('TopicConfigs', '[]KeyValue', '0+'),
      ]),
      endpoint,
      struct('TaskOffset', '0+', [
        f('SubtopologyId', 'string', '0+'),
        f('Partition', 'int32', '0+'),
        f('Offset', 'int64', '0+'),
      ]),
      taskIds,
    ],
  },
  response: {
    apiKey: 88,
    kind: 'response',
    name: 'StreamsGroupHeartbeatResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('MemberId', 'string', '0+'),
      f('MemberEpoch', 'int32', '0+'),
      f('HeartbeatIntervalMs', 'int32', '0+'),
      f('AcceptableRecoveryLagLegacy', 'int32', '0'),
      f('TaskOffsetIntervalMs', 'int32', '0+'),
      f('AcceptableRecoveryLag', 'int64', '1+', { default: -1n, ignorable: true }),
      f('Status', '[]Status', '0+', { nullableVersions: '0+' }),
      f('ActiveTasks', '[]TaskIds', '0+', { nullableVersions: '0+', default: null }),
      f('StandbyTasks', '[]TaskIds', '0+', { nullableVersions: '0+', default: null }),
      f('WarmupTasks', '[]TaskIds', '0+', { nullableVersions: '0+', default: null }),
      f('TopologyDescriptionRequired', 'bool', '1+', { default: false }),
      f('EndpointInformationEpoch', 'int32', '0+'),
      f('PartitionsByUserEndpoint', '[]EndpointToPartitions', '0+', { nullableVersions: '0+', default: null }, [
        f('UserEndpoint', 'Endpoint', '0+'),
        f('ActivePartitions', '[]TopicPartition', '0+'),
        f('StandbyPartitions', '[]TopicPartition', '0+'),
      ]),
    ],
    commonStructs: [
      struct('Status', '0+', [
        f('StatusCode', 'int8', '0+'),
        f('StatusDetail', 'string', '0+'),
      ]),
      struct('TopicPartition', '0+', [
        f('Topic', 'string', '0+'),
        f('Partitions', '[]int32', '0+'),
      ]),
      taskIds,
      endpoint,
    ],
  },
} satisfies ApiDef;
