// DescribeTransactions (API key 65): Describes transactional ids.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeTransactions = {
  apiKey: 65,
  name: 'DescribeTransactions',
  request: {
    apiKey: 65,
    kind: 'request',
    name: 'DescribeTransactionsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('TransactionalIds', '[]string', '0+'),
    ],
  },
  response: {
    apiKey: 65,
    kind: 'response',
    name: 'DescribeTransactionsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('TransactionStates', '[]TransactionState', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('TransactionalId', 'string', '0+'),
        f('TransactionState', 'string', '0+'),
        f('TransactionTimeoutMs', 'int32', '0+'),
        f('TransactionStartTimeMs', 'int64', '0+'),
        f('ProducerId', 'int64', '0+'),
        f('ProducerEpoch', 'int16', '0+'),
        f('Topics', '[]TopicData', '0+', {}, [
          f('Topic', 'string', '0+', { mapKey: true }),
          f('Partitions', '[]int32', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
