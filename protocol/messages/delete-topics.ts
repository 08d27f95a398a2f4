// DeleteTopics (API key 20): Deletes topics.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DeleteTopics = {
  apiKey: 20,
  name: 'DeleteTopics',
  request: {
    apiKey: 20,
    kind: 'request',
    name: 'DeleteTopicsRequest',
    validVersions: '0-6',
    flexibleVersions: '4+',
    fields: [
      f('Topics', '[]DeleteTopicState', '6+', {}, [
        f('Name', 'string', '6+', { nullableVersions: '6+', default: null }),
        f('TopicId', 'uuid', '6+'),
      ]),
      f('TopicNames', '[]string', '0-5', { ignorable: true }),
      f('TimeoutMs', 'int32', '0+'),
    ],
  },
  response: {
    apiKey: 20,
    kind: 'response',
    name: 'DeleteTopicsResponse',
    validVersions: '0-6',
    flexibleVersions: '4+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('Responses', '[]DeletableTopicResult', '0+', {}, [
        f('Name', 'string', '0+', { nullableVersions: '6+', mapKey: true }),
        f('TopicId', 'uuid', '6+', { ignorable: true }),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      ]),
    ],
  },
} satisfies ApiDef;
