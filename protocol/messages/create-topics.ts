// CreateTopics (API key 19): Creates topics.
import { field as f, type ApiDef } from '../schema/definition.js';

export const CreateTopics = {
  apiKey: 19,
  name: 'CreateTopics',
  request: {
    apiKey: 19,
    kind: 'request',
    name: 'CreateTopicsRequest',
    validVersions: '0-7',
    flexibleVersions: '5+',
    fields: [
      f('Topics', '[]CreatableTopic', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('NumPartitions', 'int32', '0+'),
        f('ReplicationFactor', 'int16', '0+'),
        f('Assignments', '[]CreatableReplicaAssignment', '0+', {}, [
          f('PartitionIndex', 'int32', '0+', { mapKey: true }),
          f('BrokerIds', '[]int32', '0+'),
        ]),
        f('Configs', '[]CreatableTopicConfig', '0+', {}, [
          f('Name', 'string', '0+', { mapKey: true }),
          f('Value', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
      f('timeoutMs', 'int32', '0+', { default: 60000 }),
      f('validateOnly', 'bool', '1+', { default: false }),
    ],
  },
  response: {
    apiKey: 19,
    kind: 'response',
    name: 'CreateTopicsResponse',
    validVersions: '0-7',
    flexibleVersions: '5+',
    fields: [
      f('ThrottleTimeMs', 'int32', '2+', { ignorable: true }),
      f('Topics', '[]CreatableTopicResult', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('TopicId', 'uuid', '7+', { ignorable: true }),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '1+', { nullableVersions: '0+', ignorable: true }),
        f('TopicConfigErrorCode', 'int16', '5+', { ignorable: true, tag: 0, taggedVersions: '5+' }),
        f('NumPartitions', 'int32', '5+', { default: -1, ignorable: true }),
        f('ReplicationFactor', 'int16', '5+', { default: -1, ignorable: true }),
        f('Configs', '[]CreatableTopicConfigs', '5+', { nullableVersions: '5+', ignorable: true }, [
          f('Name', 'string', '5+'),
          f('Value', 'string', '5+', { nullableVersions: '5+' }),
          f('ReadOnly', 'bool', '5+'),
          f('ConfigSource', 'int8', '5+', { default: -1, ignorable: true }),
          f('IsSensitive', 'bool', '5+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
