// DescribeClientQuotas (API key 48): Lists client quota entities and their values.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeClientQuotas = {
  apiKey: 48,
  name: 'DescribeClientQuotas',
  request: {
    apiKey: 48,
    kind: 'request',
    name: 'DescribeClientQuotasRequest',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      f('Components', '[]ComponentData', '0+', {}, [
        f('EntityType', 'string', '0+'),
        f('MatchType', 'int8', '0+'),
        f('Match', 'string', '0+', { nullableVersions: '0+' }),
      ]),
      f('Strict', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 48,
    kind: 'response',
    name: 'DescribeClientQuotasResponse',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
      f('Entries', '[]EntryData', '0+', { nullableVersions: '0+' }, [
        f('Entity', '[]EntityData', '0+', {}, [
          f('EntityType', 'string', '0+'),
          f('EntityName', 'string', '0+', { nullableVersions: '0+' }),
        ]),
        f('Values', '[]ValueData', '0+', {}, [
          f('Key', 'string', '0+'),
          f('Value', 'float64', '0+'),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
