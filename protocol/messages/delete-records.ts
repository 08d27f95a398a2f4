// DeleteRecords (API key 21): Moves partitions' log start offsets forward.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DeleteRecords = {
  apiKey: 21,
  name: 'DeleteRecords',
  request: {
    apiKey: 21,
    kind: 'request',
    name: 'DeleteRecordsRequest',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('Topics', '[]DeleteRecordsTopic', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]DeleteRecordsPartition', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('Offset', 'int64', '0+'),
        ]),
      ]),
      f('TimeoutMs', 'int32', '0+'),
    ],
  },
  response: {
    apiKey: 21,
    kind: 'response',
    name: 'DeleteRecordsResponse',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Topics', '[]DeleteRecordsTopicResult', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]DeleteRecordsPartitionResult', '0+', {}, [
          f('PartitionIndex', 'int32', '0+', { mapKey: true }),
          f('LowWatermark', 'int64', '0+'),
          f('ErrorCode', 'int16', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
