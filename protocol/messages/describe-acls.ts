// DescribeAcls (API key 29): Lists access control entries.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeAcls = {
  apiKey: 29,
  name: 'DescribeAcls',
  request: {
    apiKey: 29,
    kind: 'request',
    name: 'DescribeAclsRequest',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('ResourceTypeFilter', 'int8', '0+'),
      f('ResourceNameFilter', 'string', '0+', { nullableVersions: '0+' }),
      f('PatternTypeFilter', 'int8', '1+', { default: 3 }),
      f('PrincipalFilter', 'string', '0+', { nullableVersions: '0+' }),
      f('HostFilter', 'string', '0+', { nullableVersions: '0+' }),
      f('Operation', 'int8', '0+'),
      f('PermissionType', 'int8', '0+'),
    ],
  },
  response: {
    apiKey: 29,
    kind: 'response',
    name: 'DescribeAclsResponse',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      f('Resources', '[]DescribeAclsResource', '0+', {}, [
        f('ResourceType', 'int8', '0+'),
        f('ResourceName', 'string', '0+'),
        f('PatternType', 'int8', '1+', { default: 3 }),
        f('Acls', '[]AclDescription', '0+', {}, [
          f('Principal', 'string', '0+'),
          f('Host', 'string', '0+'),
          f('Operation', 'int8', '0+'),
          f('PermissionType', 'int8', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
