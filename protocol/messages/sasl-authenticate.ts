// SaslAuthenticate (API key 36): Carries SASL authentication bytes.
import { field as f, type ApiDef } from '../schema/definition.js';

export const SaslAuthenticate = {
  apiKey: 36,
  name: 'SaslAuthenticate',
  request: {
    apiKey: 36,
    kind: 'request',
    name: 'SaslAuthenticateRequest',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('AuthBytes', 'bytes', '0+'),
    ],
  },
  response: {
    apiKey: 36,
    kind: 'response',
    name: 'SaslAuthenticateResponse',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      f('AuthBytes', 'bytes', '0+'),
      f('SessionLifetimeMs', 'int64', '1+', { default: 0n, ignorable: true }),
    ],
  },
} satisfies ApiDef;
