// DeleteShareGroupOffsets (API key 92): forgets an empty share group's state for whole topics (kafka-share-groups.sh --delete-offsets).
import { field as f, type ApiDef } from '../schema/definition.js';

export const DeleteShareGroupOffsets = {
  apiKey: 92,
  name: 'DeleteShareGroupOffsets',
  request: {
    apiKey: 92,
    kind: 'request',
    name: 'DeleteShareGroupOffsetsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('Topics', '[]DeleteShareGroupOffsetsRequestTopic', '0+', {}, [
        f('TopicName', 'string', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 92,
    kind: 'response',
    name: 'DeleteShareGroupOffsetsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('Responses', '[]DeleteShareGroupOffsetsResponseTopic', '0+', {}, [
        f('TopicName', 'string', '0+'),
        f('TopicId', 'uuid', '0+'),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      ]),
    ],
  },
} satisfies ApiDef;
