// CreateAcls (API key 30): Creates access control entries.
import { field as f, type ApiDef } from '../schema/definition.js';

export const CreateAcls = {
  apiKey: 30,
  name: 'CreateAcls',
  request: {
    apiKey: 30,
    kind: 'request',
    name: 'CreateAclsRequest',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('Creations', '[]AclCreation', '0+', {}, [
        f('ResourceType', 'int8', '0+'),
        f('ResourceName', 'string', '0+'),
        f('ResourcePatternType', 'int8', '1+', { default: 3 }),
        f('Principal', 'string', '0+'),
        f('Host', 'string', '0+'),
        f('Operation', 'int8', '0+'),
        f('PermissionType', 'int8', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 30,
    kind: 'response',
    name: 'CreateAclsResponse',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Results', '[]AclCreationResult', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      ]),
    ],
  },
} satisfies ApiDef;
