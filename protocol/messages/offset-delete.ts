// OffsetDelete (API key 47): Deletes a group's committed offsets for some partitions.
import { field as f, type ApiDef } from '../schema/definition.js';

export const OffsetDelete = {
  apiKey: 47,
  name: 'OffsetDelete',
  request: {
    apiKey: 47,
    kind: 'request',
    name: 'OffsetDeleteRequest',
    validVersions: '0',
    flexibleVersions: 'none',
    fields: [
      f('GroupId', 'string', '0+'),
      f('Topics', '[]OffsetDeleteRequestTopic', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]OffsetDeleteRequestPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
        ]),
      ]),
    ],
  },
  response: {
    apiKey: 47,
    kind: 'response',
    name: 'OffsetDeleteResponse',
    validVersions: '0',
    flexibleVersions: 'none',
    fields: [
      f('ErrorCode', 'int16', '0+'),
      f('ThrottleTimeMs', 'int32', '0+', { ignorable: true }),
      f('Topics', '[]OffsetDeleteResponseTopic', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]OffsetDeleteResponsePartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+', { mapKey: true }),
          f('ErrorCode', 'int16', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
