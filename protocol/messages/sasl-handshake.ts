// SaslHandshake (API key 17): Chooses a SASL mechanism.
import { field as f, type ApiDef } from '../schema/definition.js';

export const SaslHandshake = {
  apiKey: 17,
  name: 'SaslHandshake',
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
} satisfies ApiDef;
