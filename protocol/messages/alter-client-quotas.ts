// AlterClientQuotas (API key 49): Sets and removes client quota values.
import { field as f, type ApiDef } from '../schema/definition.js';

export const AlterClientQuotas = {
  apiKey: 49,
  name: 'AlterClientQuotas',
  request: {
    apiKey: 49,
    kind: 'request',
    name: 'AlterClientQuotasRequest',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      f('Entries', '[]EntryData', '0+', {}, [
        f('Entity', '[]EntityData', '0+', {}, [
          f('EntityType', 'string', '0+'),
          f('EntityName', 'string', '0+', { nullableVersions: '0+' }),
        ]),
        f('Ops', '[]OpData', '0+', {}, [
          f('Key', 'string', '0+'),
          f('Value', 'float64', '0+'),
          f('Remove', 'bool', '0+'),
        ]),
      ]),
      f('ValidateOnly', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 49,
    kind: 'response',
    name: 'AlterClientQuotasResponse',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Entries', '[]EntryData', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
        f('Entity', '[]EntityData', '0+', {}, [
          f('EntityType', 'string', '0+'),
          f('EntityName', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
