// Metadata (API key 3): Lists brokers, topics and partition leaders; may auto-create topics.
import { field as f, type ApiDef } from '../schema/definition.js';

export const Metadata = {
  apiKey: 3,
  name: 'Metadata',
  request: {
    apiKey: 3,
    kind: 'request',
    name: 'MetadataRequest',
    validVersions: '0-12',
    flexibleVersions: '9+',
    fields: [
      f('Topics', '[]MetadataRequestTopic', '0+', { nullableVersions: '1+' }, [
        f('TopicId', 'uuid', '10+', { ignorable: true }),
        f('Name', 'string', '0+', { nullableVersions: '10+' }),
      ]),
      f('AllowAutoTopicCreation', 'bool', '4+', { default: true }),
      f('IncludeClusterAuthorizedOperations', 'bool', '8-10'),
      f('IncludeTopicAuthorizedOperations', 'bool', '8+'),
    ],
  },
  response: {
    apiKey: 3,
    kind: 'response',
    name: 'MetadataResponse',
    validVersions: '0-12',
    flexibleVersions: '9+',
    fields: [
      f('ThrottleTimeMs', 'int32', '3+', { ignorable: true }),
      f('Brokers', '[]MetadataResponseBroker', '0+', {}, [
        f('NodeId', 'int32', '0+', { mapKey: true }),
        f('Host', 'string', '0+'),
        f('Port', 'int32', '0+'),
        f('Rack', 'string', '1+', { nullableVersions: '1+', default: null, ignorable: true }),
      ]),
      f('ClusterId', 'string', '2+', { nullableVersions: '2+', default: null, ignorable: true }),
      f('ControllerId', 'int32', '1+', { default: -1, ignorable: true }),
      f('Topics', '[]MetadataResponseTopic', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('Name', 'string', '0+', { nullableVersions: '12+', mapKey: true }),
        f('TopicId', 'uuid', '10+', { ignorable: true }),
        f('IsInternal', 'bool', '1+', { default: false, ignorable: true }),
        f('Partitions', '[]MetadataResponsePartition', '0+', {}, [
          f('ErrorCode', 'int16', '0+'),
          f('PartitionIndex', 'int32', '0+'),
          f('LeaderId', 'int32', '0+'),
          f('LeaderEpoch', 'int32', '7+', { default: -1, ignorable: true }),
          f('ReplicaNodes', '[]int32', '0+'),
          f('IsrNodes', '[]int32', '0+'),
          f('OfflineReplicas', '[]int32', '5+', { ignorable: true }),
        ]),
        f('TopicAuthorizedOperations', 'int32', '8+', { default: -2147483648 }),
      ]),
      f('ClusterAuthorizedOperations', 'int32', '8-10', { default: -2147483648 }),
    ],
  },
} satisfies ApiDef;
