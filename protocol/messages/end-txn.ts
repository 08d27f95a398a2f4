// EndTxn (API key 26): Commits or aborts a transaction.
import { field as f, type ApiDef } from '../schema/definition.js';

export const EndTxn = {
  apiKey: 26,
  name: 'EndTxn',
  request: {
    apiKey: 26,
    kind: 'request',
    name: 'EndTxnRequest',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('TransactionalId', 'string', '0+'),
      f('ProducerId', 'int64', '0+'),
      f('ProducerEpoch', 'int16', '0+'),
      f('Committed', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 26,
    kind: 'response',
    name: 'EndTxnResponse',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ProducerId', 'int64', '5+', { default: -1n, ignorable: true }),
      f('ProducerEpoch', 'int16', '5+', { default: -1, ignorable: true }),
    ],
  },
} satisfies ApiDef;
