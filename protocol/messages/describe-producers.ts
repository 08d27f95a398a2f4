// DescribeProducers (API key 61): Describes the active idempotent producers of partitions.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeProducers = {
  apiKey: 61,
  name: 'DescribeProducers',
  request: {
    apiKey: 61,
    kind: 'request',
    name: 'DescribeProducersRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('Topics', '[]TopicRequest', '0+', {}, [
        f('Name', 'string', '0+'),
        f('PartitionIndexes', '[]int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 61,
    kind: 'response',
    name: 'DescribeProducersResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Topics', '[]TopicResponse', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Partitions', '[]PartitionResponse', '0+', {}, [
          f('PartitionIndex', 'int32', '0+'),
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
          f('ActiveProducers', '[]ProducerState', '0+', {}, [
            f('ProducerId', 'int64', '0+'),
            f('ProducerEpoch', 'int32', '0+'),
            f('LastSequence', 'int32', '0+', { default: -1 }),
            f('LastTimestamp', 'int64', '0+', { default: -1n }),
            f('CoordinatorEpoch', 'int32', '0+'),
            f('CurrentTxnStartOffset', 'int64', '0+', { default: -1n }),
          ]),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
