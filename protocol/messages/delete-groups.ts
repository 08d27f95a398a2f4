// DeleteGroups (API key 42): Deletes consumer groups that have no members.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DeleteGroups = {
  apiKey: 42,
  name: 'DeleteGroups',
  request: {
    apiKey: 42,
    kind: 'request',
    name: 'DeleteGroupsRequest',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('GroupsNames', '[]string', '0+'),
    ],
  },
  response: {
    apiKey: 42,
    kind: 'response',
    name: 'DeleteGroupsResponse',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Results', '[]DeletableGroupResult', '0+', {}, [
        f('GroupId', 'string', '0+', { mapKey: true }),
        f('ErrorCode', 'int16', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
