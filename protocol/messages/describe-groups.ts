// DescribeGroups (API key 15): Describes groups: state, protocol, members and assignments.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeGroups = {
  apiKey: 15,
  name: 'DescribeGroups',
  request: {
    apiKey: 15,
    kind: 'request',
    name: 'DescribeGroupsRequest',
    validVersions: '0-5',
    flexibleVersions: '5+',
    fields: [
      f('Groups', '[]string', '0+'),
      f('IncludeAuthorizedOperations', 'bool', '3+'),
    ],
  },
  response: {
    apiKey: 15,
    kind: 'response',
    name: 'DescribeGroupsResponse',
    validVersions: '0-5',
    flexibleVersions: '5+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('Groups', '[]DescribedGroup', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('GroupId', 'string', '0+'),
        f('GroupState', 'string', '0+'),
        f('ProtocolType', 'string', '0+'),
        f('ProtocolData', 'string', '0+'),
        f('Members', '[]DescribedGroupMember', '0+', {}, [
          f('MemberId', 'string', '0+'),
          f('GroupInstanceId', 'string', '4+', { nullableVersions: '4+', default: null, ignorable: true }),
          f('ClientId', 'string', '0+'),
          f('ClientHost', 'string', '0+'),
          f('MemberMetadata', 'bytes', '0+'),
          f('MemberAssignment', 'bytes', '0+'),
        ]),
        f('AuthorizedOperations', 'int32', '3+', { default: -2147483648 }),
      ]),
    ],
  },
} satisfies ApiDef;
