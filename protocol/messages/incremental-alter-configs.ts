// IncrementalAlterConfigs (API key 44): Sets, deletes, appends to or subtracts from configuration entries.
import { field as f, type ApiDef } from '../schema/definition.js';

export const IncrementalAlterConfigs = {
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  request: {
    apiKey: 44,
    kind: 'request',
    name: 'IncrementalAlterConfigsRequest',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      f('Resources', '[]AlterConfigsResource', '0+', {}, [
        f('ResourceType', 'int8', '0+', { mapKey: true }),
        f('ResourceName', 'string', '0+', { mapKey: true }),
        f('Configs', '[]AlterableConfig', '0+', {}, [
          f('Name', 'string', '0+', { mapKey: true }),
          f('ConfigOperation', 'int8', '0+', { mapKey: true }),
          f('Value', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
      f('ValidateOnly', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 44,
    kind: 'response',
    name: 'IncrementalAlterConfigsResponse',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('Responses', '[]AlterConfigsResourceResponse', '0+', {}, [
        f('ErrorCode', 'int16', '0+'),
        f('ErrorMessage', 'string', '0+', { nullableVersions: '0+' }),
        f('ResourceType', 'int8', '0+'),
        f('ResourceName', 'string', '0+'),
      ]),
    ],
  },
} satisfies ApiDef;
