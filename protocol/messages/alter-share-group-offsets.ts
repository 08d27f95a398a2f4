// AlterShareGroupOffsets (API key 91): sets share-partition start offsets of an empty share group (kafka-share-groups.sh --reset-offsets).
import { field as f, type ApiDef } from '../schema/definition.js';

export const AlterShareGroupOffsets = {
  apiKey: 91,
  name: 'AlterShareGroupOffsets',
  request: {
    apiKey: 91,
    kind: 'request',
    name: 'AlterShareGroupOffsetsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('Topics', '[]AlterShareGroupOffsetsRequestTopic', '0+', {}, [
        f('TopicName', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]AlterShareGroupOffsetsRequestPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('StartOffset', 'int64', '0+'),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 91,
    kind: 'response',
    name: 'AlterShareGroupOffsetsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('Responses', '[]AlterShareGroupOffsetsResponseTopic', '0+', {}, [
        f('TopicName', 'string', '0+', { mapKey: true }),
        f('TopicId', 'uuid', '0+'),
        f('Partitions', '[]AlterShareGroupOffsetsResponsePartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
