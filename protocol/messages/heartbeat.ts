// Heartbeat (API key 12): Keeps a group member alive and tells it when to rejoin.
import { field as f, type ApiDef } from '../schema/definition.js';

export const Heartbeat = {
  apiKey: 12,
  name: 'Heartbeat',
  request: {
    apiKey: 12,
    kind: 'request',
    name: 'HeartbeatRequest',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      f('GroupId', 'string', '0+'),
      f('GenerationId', 'int32', '0+'),
      f('MemberId', 'string', '0+'),
      f('GroupInstanceId', 'string', '3+', { nullableVersions: '3+', default: null }),
    ],
  },
  response: {
    apiKey: 12,
    kind: 'response',
    name: 'HeartbeatResponse',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('ErrorCode', 'int16', '0+'),
    ],
  },
} satisfies ApiDef;
