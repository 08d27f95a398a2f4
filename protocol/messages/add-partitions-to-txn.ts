// AddPartitionsToTxn (API key 24): Adds partitions to an ongoing transaction.
import { field as f, struct, type ApiDef } from '../schema/definition.js';

export const AddPartitionsToTxn = {
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  request: {
    apiKey: 24,
    kind: 'request',
    name: 'AddPartitionsToTxnRequest',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('Transactions', '[]AddPartitionsToTxnTransaction', '4+', {}, [
        f('TransactionalId', 'string', '4+', { mapKey: true }),
        f('ProducerId', 'int64', '4+'),
        f('ProducerEpoch', 'int16', '4+'),
        f('VerifyOnly', 'bool', '4+', { default: false }),
        f('Topics', '[]AddPartitionsToTxnTopic', '4+'),
      ]),
      f('V3AndBelowTransactionalId', 'string', '0-3'),
      f('V3AndBelowProducerId', 'int64', '0-3'),
      f('V3AndBelowProducerEpoch', 'int16', '0-3'),
      f('V3AndBelowTopics', '[]AddPartitionsToTxnTopic', '0-3'),
    ],
    commonStructs: [
      struct('AddPartitionsToTxnTopic', '0+', [
        f('Name', 'string', '0+', { mapKey: true }),
        f('Partitions', '[]int32', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 24,
    kind: 'response',
    name: 'AddPartitionsToTxnResponse',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '4+', { ignorable: true }),
      f('ResultsByTransaction', '[]AddPartitionsToTxnResult', '4+', {}, [
        f('TransactionalId', 'string', '4+', { mapKey: true }),
        f('TopicResults', '[]AddPartitionsToTxnTopicResult', '4+'),
      ]),
      f('ResultsByTopicV3AndBelow', '[]AddPartitionsToTxnTopicResult', '0-3'),
    ],
    commonStructs: [
      struct('AddPartitionsToTxnTopicResult', '0+', [
        f('Name', 'string', '0+', { mapKey: true }),
        f('ResultsByPartition', '[]AddPartitionsToTxnPartitionResult', '0+'),
      ]),
      struct('AddPartitionsToTxnPartitionResult', '0+', [
        f('PartitionIndex', 'int32', '0+', { mapKey: true }),
        f('PartitionErrorCode', 'int16', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
