// SyncGroup (API key 14): Hands out the leader's partition assignments.
import { field as f, type ApiDef } from '../schema/definition.js';

export const SyncGroup = {
  apiKey: 14,
  name: 'SyncGroup',
  request: {
    apiKey: 14,
    kind: 'request',
    name: 'SyncGroupRequest',
    validVersions: '0-5',
    flexibleVersions: '4+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('GenerationId', 'int32', '0+'),
      f('MemberId', 'string', '0+'),
      f('GroupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
      f('ProtocolType', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      f('ProtocolName', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      f('Assignments', '[]SyncGroupRequestAssignment', '0+', {}, [
        f('MemberId', 'string', '0+'),
        f('Assignment', 'bytes', '0+'),
      ]),
    ],
  },
  response: {
    apiKey: 14,
    kind: 'response',
    name: 'SyncGroupResponse',
    validVersions: '0-5',
    flexibleVersions: '4+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('ErrorCode', 'int16', '0+'),
      f('ProtocolType', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      f('ProtocolName', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
      f('Assignment', 'bytes', '0+'),
    ],
  },
} satisfies ApiDef;
