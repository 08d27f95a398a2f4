// JoinGroup (API key 11): Joins a consumer group; held until the rebalance completes.
import { field as f, type ApiDef } from '../schema/definition.js';

export const JoinGroup = {
  apiKey: 11,
  name: 'JoinGroup',
  request: {
    apiKey: 11,
    kind: 'request',
    name: 'JoinGroupRequest',
    validVersions: '0-9',
    flexibleVersions: '6+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('SessionTimeoutMs', 'int32', '0+'),
      f('RebalanceTimeoutMs', 'int32', '1+', { default: -1, ignorable: true }),
      f('MemberId', 'string', '0+'),
      f('GroupInstanceId', 'string', '5+', { nullableVersions: '5+', default: null }),
      f('ProtocolType', 'string', '0+'),
      f('Protocols', '[]JoinGroupRequestProtocol', '0+', {}, [
        f('Name', 'string', '0+', { mapKey: true }),
        f('Metadata', 'bytes', '0+'),
      ]),
      f('Reason', 'string', '8+', { nullableVersions: '8+', default: null, ignorable: true }),
    ],
  },
  response: {
    apiKey: 11,
    kind: 'response',
    name: 'JoinGroupResponse',
    validVersions: '0-9',
    flexibleVersions: '6+',
    fields: [
      f('ThrottleTimeMs', 'int32', '2+', { ignorable: true }),
      f('ErrorCode', 'int16', '0+'),
      f('GenerationId', 'int32', '0+', { default: -1 }),
      f('ProtocolType', 'string', '7+', { nullableVersions: '7+', default: null, ignorable: true }),
      f('ProtocolName', 'string', '0+', { nullableVersions: '7+' }),
      f('Leader', 'string', '0+'),
      f('SkipAssignment', 'bool', '9+', { default: false }),
      f('MemberId', 'string', '0+'),
      f('Members', '[]JoinGroupResponseMember', '0+', {}, [
        f('MemberId', 'string', '0+'),
        f('GroupInstanceId', 'string', '5+', { nullableVersions: '5+', default: null, ignorable: true }),
        f('Metadata', 'bytes', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
