// InitProducerId (API key 22): Allocates a producer id and epoch for idempotent and transactional producers.
import { field as f, type ApiDef } from '../schema/definition.js';

export const InitProducerId = {
  apiKey: 22,
  name: 'InitProducerId',
  request: {
    apiKey: 22,
    kind: 'request',
    name: 'InitProducerIdRequest',
    validVersions: '0-5',
    flexibleVersions: '2+',
    fields: [
      f('TransactionalId', 'string', '0+', { nullableVersions: '0+' }),
      f('TransactionTimeoutMs', 'int32', '0+'),
      f('ProducerId', 'int64', '3+', { default: -1n }),
      f('ProducerEpoch', 'int16', '3+', { default: -1 }),
    ],
  },
  response: {
    apiKey: 22,
    kind: 'response',
    name: 'InitProducerIdResponse',
    validVersions: '0-5',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+', { ignorable: true }),
      f('ErrorCode', 'int16', '0+'),
      f('ProducerId', 'int64', '0+', { default: -1n }),
      f('ProducerEpoch', 'int16', '0+'),
    ],
  },
} satisfies ApiDef;
