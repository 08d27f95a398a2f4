// ListGroups (API key 16): Lists groups, optionally filtered by state.
import { field as f, type ApiDef } from '../schema/definition.js';

export const ListGroups = {
  apiKey: 16,
  name: 'ListGroups',
  request: {
    apiKey: 16,
    kind: 'request',
    name: 'ListGroupsRequest',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('StatesFilter', '[]string', '4+'),
      f('TypesFilter', '[]string', '5+'),
    ],
  },
  response: {
    apiKey: 16,
    kind: 'response',
    name: 'ListGroupsResponse',
    validVersions: '0-5',
    flexibleVersions: '3+',
    fields: [
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('ErrorCode', 'int16', '0+'),
      f('Groups', '[]ListedGroup', '0+', {}, [
        f('GroupId', 'string', '0+'),
        f('ProtocolType', 'string', '0+'),
        f('GroupState', 'string', '4+', { ignorable: true }),
        f('GroupType', 'string', '5+', { ignorable: true }),
      ]),
    ],
  },
} satisfies ApiDef;
