// DescribeConfigs (API key 32): Reads topic and broker configuration.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeConfigs = {
  apiKey: 32,
  name: 'DescribeConfigs',
  request: {
    apiKey: 32,
    kind: 'request',
    name: 'DescribeConfigsRequest',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      f('Resources', '[]DescribeConfigsResource', '0+', {}, [
        f('ResourceType', 'int8', '0+'),
        f('ResourceName', 'string', '0+'),
        f('ConfigurationKeys', '[]string', '0+', { nullableVersions: '0+' }),
      ]),
      f('IncludeSynonyms', 'bool', '1+', { default: false }),
      f('IncludeDocumentation', 'bool', '3+', { default: false }),
    ],
  },
  response: {
    apiKey: 32,
    kind: 'response',
    name: 'DescribeConfigsResponse',
    validVersions: '0-4',
    flexibleVersions: '4+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Results', '[]DescribeConfigsResult', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
        f('ResourceType', 'int8', '0+'),
        f('ResourceName', 'string', '0+'),
        f('Configs', '[]DescribeConfigsResourceResult', '0+', {}, [
          f('Name', 'string', '0+'),
          f('Value', 'string', '0+', { nullableVersions: '0+' }),
          f('ReadOnly', 'bool', '0+'),
          f('IsDefault', 'bool', '0'),
          f('ConfigSource', 'int8', '1+', { default: -1, ignorable: true }),
          f('IsSensitive', 'bool', '0+'),
          f('Synonyms', '[]DescribeConfigsSynonym', '1+', { ignorable: true }, [
            f('Name', 'string', '1+'),
            f('Value', 'string', '1+', { nullableVersions: '0+' }),
            f('Source', 'int8', '1+'),
          ]),
          f('ConfigType', 'int8', '3+', { default: 0, ignorable: true }),
          f('Documentation', 'string', '3+', { nullableVersions: '0+', ignorable: true }),
        ]),
      ]),
    ],
  },
} satisfies ApiDef;
