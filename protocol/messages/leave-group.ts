// LeaveGroup (API key 13): Removes members from a group.
import { field as f, type ApiDef } from '../schema/definition.js';

export const LeaveGroup = {
  apiKey: 13,
  name: 'LeaveGroup',
  request: {
    apiKey: 13,
    kind: 'request',
    name: 'LeaveGroupRequest',
    validVersions: '0-5',
    flexibleVersions: '4+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('MemberId', 'string', '0-2'),
      f('Members', '[]MemberIdentity', '3+', {}, [
        f('MemberId', 'string', '3+'),
        f('GroupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
        f('Reason', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      ]),
    ],
  },
  response: {
    apiKey: 13,
    kind: 'response',
    name: 'LeaveGroupResponse',
    validVersions: '0-5',
    flexibleVersions: '4+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('ErrorCode', 'int16', '0+'),
      f('Members', '[]MemberResponse', '3+', {}, [
        f('MemberId', 'string', '3+'),
        f('GroupInstanceId', 'string', '3+', { nullableVersions: '3+' }),
        f('ErrorCode', 'int16', '3+'),
      ]),
    ],
  },
} satisfies ApiDef;
