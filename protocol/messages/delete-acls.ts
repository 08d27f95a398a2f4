// DeleteAcls (API key 31): Deletes access control entries.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DeleteAcls = {
  apiKey: 31,
  name: 'DeleteAcls',
  request: {
    apiKey: 31,
    kind: 'request',
    name: 'DeleteAclsRequest',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('Filters', '[]DeleteAclsFilter', '0+', {}, [
        f('ResourceTypeFilter', 'int8', '0+'),
        f('ResourceNameFilter', 'string', '0+', { nullableVersions: '0+' }),
        f('PatternTypeFilter', 'int8', '1+', { default: 3 }),
        f('PrincipalFilter', 'string', '0+', { nullableVersions: '0+' }),
        f('HostFilter', 'string', '0+', { nullableVersions: '0+' }),
        f('Operation', 'int8', '0+'),
        f('PermissionType', 'int8', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 31,
    kind: 'response',
    name: 'DeleteAclsResponse',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('FilterResults', '[]DeleteAclsFilterResult', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
        f('MatchingAcls', '[]DeleteAclsMatchingAcl', '0+', {}, [
          f('ErrorCode', 'int16', '0+'),
          f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
          f('ResourceType', 'int8', '0+'),
          f('ResourceName', 'string', '0+'),
          f('PatternType', 'int8', '1+', { default: 3 }),
          f('Principal', 'string', '0+'),
          f('Host', 'string', '0+'),
          f('Operation', 'int8', '0+'),
          f('PermissionType', 'int8', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
