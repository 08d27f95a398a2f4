// SaslHandshake (API key 17): Chooses a SASL mechanism.
import { field as f, type ApiDef } from '../schema/definition.js';

export const SaslHandshake: ApiDef = {
  apiKey: 17,
  name: 'SaslHandshake',
  versions: '0-1',
  request: {
    apiKey: 17,
    kind: 'request',
    name: 'SaslHandshakeRequest',
    validVersions: '0-1',
    flexibleVersions: 'none',
    fields: [
      f('Mechanism', 'string', '0+'),
    ],
  },
  response: {
    apiKey: 17,
    kind: 'response',
    name: 'SaslHandshakeResponse',
    validVersions: '0-1',
    flexibleVersions: 'none',
    fields: [
      f('ErrorCode', 'int16', '0+'),
      f('Mechanisms', '[]string', '0+'),
    ],
  },
};
