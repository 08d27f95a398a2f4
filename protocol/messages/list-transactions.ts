// ListTransactions (API key 66): Lists transactional ids.
import { field as f, type ApiDef } from '../schema/definition.js';

export const ListTransactions = {
  apiKey: 66,
  name: 'ListTransactions',
  request: {
    apiKey: 66,
    kind: 'request',
    name: 'ListTransactionsRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('StateFilters', '[]string', '0+'),
      f('ProducerIdFilters', '[]int64', '0+'),
      f('DurationFilter', 'int64', '1+', { default: -1n }),
    ],
  },
  response: {
    apiKey: 66,
    kind: 'response',
    name: 'ListTransactionsResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('UnknownStateFilters', '[]string', '0+'),
      f('TransactionStates', '[]TransactionState', '0+', {}, [
        f('TransactionalId', 'string', '0+'),
        f('ProducerId', 'int64', '0+'),
        f('TransactionState', 'string', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
