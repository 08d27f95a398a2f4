// DescribeUserScramCredentials (API key 50): Describes SCRAM credentials.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeUserScramCredentials = {
  apiKey: 50,
  name: 'DescribeUserScramCredentials',
  request: {
    apiKey: 50,
    kind: 'request',
    name: 'DescribeUserScramCredentialsRequest',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('Users', '[]UserName', '0+', { nullableVersions: '0+' }, [
        f('Name', 'string', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 50,
    kind: 'response',
    name: 'DescribeUserScramCredentialsResponse',
    validVersions: '0',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      f('Results', '[]DescribeUserScramCredentialsResult', '0+', {}, [
        f('User', 'string', '0+'),
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
        f('CredentialInfos', '[]CredentialInfo', '0+', {}, [
          f('Mechanism', 'int8', '0+'),
          f('Iterations', 'int32', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
