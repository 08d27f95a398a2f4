// AlterUserScramCredentials (API key 51): Creates or deletes SCRAM credentials.
import { field as f, type ApiDef } from '../schema/definition.js';

export const AlterUserScramCredentials = {
  apiKey: 51,
  name: 'AlterUserScramCredentials',
  request: {
    apiKey: 51,
    kind: 'request',
    name: 'AlterUserScramCredentialsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('Deletions', '[]ScramCredentialDeletion', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Mechanism', 'int8', '0+'),
      ]),
      f('Upsertions', '[]ScramCredentialUpsertion', '0+', {}, [
        f('Name', 'string', '0+'),
        f('Mechanism', 'int8', '0+'),
        f('Iterations', 'int32', '0+'),
        f('Salt', 'bytes', '0+'),
        f('SaltedPassword', 'bytes', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 51,
    kind: 'response',
    name: 'AlterUserScramCredentialsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Results', '[]AlterUserScramCredentialsResult', '0+', {}, [
        f('User', 'string', '0+'),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      ]),
    ],
  },
} satisfies ApiDef;
