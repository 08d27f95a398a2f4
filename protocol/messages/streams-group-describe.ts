// StreamsGroupDescribe (API key 89): describes Kafka Streams groups (KIP-1071): topology, epochs, each member's tasks.
import { field as f, struct, type ApiDef } from '../schema/definition.js';

const node = [
  f('Name', 'string', '1+'),
  f('NodeType', 'int8', '1+'),
  f('SourceTopics', '[]string', '1+'),
  f('SinkTopic', 'string', '1+', { nullableVersions: '1+', default: null }),
  f('Stores', '[]string', '1+'),
  f('Successors', '[]string', '1+'),
] as const;

export const StreamsGroupDescribe = {
  apiKey: 89,
  name: 'StreamsGroupDescribe',
  request: {
    apiKey: 89,
    kind: 'request',
    name: 'StreamsGroupDescribeRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('GroupIds', '[]string', '0+'),
      f('IncludeAuthorizedOperations', 'bool', '0+'),
      f('IncludeTopologyDescription', 'bool', '1+', { default: false }),
    ],
  },
  response: {
    apiKey: 89,
    kind: 'response',
    name: 'StreamsGroupDescribeResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Groups', '[]DescribedGroup', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
        f('GroupId', 'string', '0+'),
        f('GroupState', 'string', '0+'),
        f('GroupEpoch', 'int32', '0+'),
        f('AssignmentEpoch', 'int32', '0+'),
        f('Topology', 'Topology', '0+', { nullableVersions: '0+', default: null }, [
          f('Epoch', 'int32', '0+'),
          f('Subtopologies', '[]Subtopology', '0+', { nullableVersions: '0+', default: null }, [
            f('SubtopologyId', 'string', '0+'),
            f('SourceTopics', '[]string', '0+'),
            f('RepartitionSinkTopics', '[]string', '0+'),
            f('StateChangelogTopics', '[]TopicInfo', '0+'),
            f('RepartitionSourceTopics', '[]TopicInfo', '0+'),
          ]),
        ]),
        f('Members', '[]Member', '0+', {}, [
          f('MemberId', 'string', '0+'),
          f('MemberEpoch', 'int32', '0+'),
          f('InstanceId', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('RackId', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('ClientId', 'string', '0+'),
          f('ClientHost', 'string', '0+'),
          f('TopologyEpoch', 'int32', '0+'),
          f('ProcessId', 'string', '0+'),
          f('UserEndpoint', 'Endpoint', '0+', { nullableVersions: '0+', default: null }),
          f('ClientTags', '[]KeyValue', '0+'),
          f('TaskOffsets', '[]TaskOffset', '0+'),
          f('TaskEndOffsets', '[]TaskOffset', '0+'),
          f('Assignment', 'Assignment', '0+'),
          f('TargetAssignment', 'Assignment', '0+'),
          f('IsClassic', 'bool', '0+'),
        ]),
        f('AuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
        f('TopologyDescription', 'TopologyDescription', '1+', { nullableVersions: '1+', default: null }),
        f('TopologyDescriptionStatus', 'int8', '1+', { default: 0 }),
        f('AssignorName', 'string', '1+', { nullableVersions: '1+', default: null, ignorable: true }),
      ]),
    ],
    commonStructs: [
      struct('Endpoint', '0+', [
        f('Host', 'string', '0+'),
        f('Port', 'uint16', '0+'),
      ]),
      struct('TaskOffset', '0+', [
        f('SubtopologyId', 'string', '0+'),
        f('Partition', 'int32', '0+'),
        f('Offset', 'int64', '0+'),
      ]),
      struct('Assignment', '0+', [
        f('ActiveTasks', '[]TaskIds', '0+'),
        f('StandbyTasks', '[]TaskIds', '0+'),
        f('WarmupTasks', '[]TaskIds', '0+'),
      ]),
      struct('TaskIds', '0+', [
        f('SubtopologyId', 'string', '0+'),
        f('Partitions', '[]int32', '0+'),
      ]),
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
      struct('TopologyDescription', '1+', [
        f('Subtopologies', '[]TopologyDescriptionSubtopology', '1+'),
        f('GlobalStores', '[]TopologyDescriptionGlobalStore', '1+'),
      ]),
      struct('TopologyDescriptionSubtopology', '1+', [
        f('SubtopologyId', 'string', '1+'),
        f('Nodes', '[]TopologyDescriptionNode', '1+'),
      ]),
      struct('TopologyDescriptionNode', '1+', [...node]),
      struct('TopologyDescriptionGlobalStore', '1+', [
        f('Source', 'TopologyDescriptionNode', '1+'),
        f('Processor', 'TopologyDescriptionNode', '1+'),
      ]),
    ],
  },
} satisfies ApiDef;
