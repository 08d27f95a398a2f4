// FindCoordinator (API key 10): Names the broker that coordinates a group or transactional id.
import { field as f, type ApiDef } from '../schema/definition.js';

export const FindCoordinator = {
  apiKey: 10,
  name: 'FindCoordinator',
  request: {
    apiKey: 10,
    kind: 'request',
    name: 'FindCoordinatorRequest',
    validVersions: '0-6',
    flexibleVersions: '3+',
    fields: [
      f('Key', 'string', '0-3'),
      f('KeyType', 'int8', '1+', { default: 0 }),
      f('CoordinatorKeys', '[]string', '4+'),
    ],
  },
  response: {
    apiKey: 10,
    kind: 'response',
    name: 'FindCoordinatorResponse',
    validVersions: '0-6',
    flexibleVersions: '3+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('ErrorCode', 'int16', '0-3'),
      f('ErrorMessage', 'string', '1-3', { nullableVersions: '1-3', ignorable: true }),
      f('NodeId', 'int32', '0-3'),
      f('Host', 'string', '0-3'),
      f('Port', 'int32', '0-3'),
      f('Coordinators', '[]Coordinator', '4+', {}, [
        f('Key', 'string', '4+'),
        f('NodeId', 'int32', '4+'),
        f('Host', 'string', '4+'),
        f('Port', 'int32', '4+'),
        f('ErrorCode', 'int16', '4+'),
        f('ErrorMessage', 'string', '4+', { nullableVersions: '4+', ignorable: true }),
      ]),
    ],
  },
} satisfies ApiDef;
