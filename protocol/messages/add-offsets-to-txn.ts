// AddOffsetsToTxn (API key 25): Adds a group's offsets to an ongoing transaction.
import { field as f, type ApiDef } from '../schema/definition.js';

export const AddOffsetsToTxn = {
  apiKey: 25,
  name: 'AddOffsetsToTxn',
  request: {
    apiKey: 25,
    kind: 'request',
    name: 'AddOffsetsToTxnRequest',
    validVersions: '0-4',
    flexibleVersions: '3+',
    fields: [
      f('TransactionalId', 'string', '0+'),
      f('ProducerId', 'int64', '0+'),
      f('ProducerEpoch', 'int16', '0+'),
      f('GroupId', 'string', '0+'),
    ],
  },
  response: {
    apiKey: 25,
    kind: 'response',
    name: 'AddOffsetsToTxnResponse',
    validVersions: '0-4',
    flexibleVersions: '3+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
    ],
  },
} satisfies ApiDef;
