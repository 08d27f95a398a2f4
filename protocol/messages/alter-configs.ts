// AlterConfigs (API key 33): Replaces configuration wholesale.
import { field as f, type ApiDef } from '../schema/definition.js';

export const AlterConfigs = {
  apiKey: 33,
  name: 'AlterConfigs',
  request: {
    apiKey: 33,
    kind: 'request',
    name: 'AlterConfigsRequest',
    validVersions: '0-2',
    flexibleVersions: '2+',
    fields: [
      f('Resources', '[]AlterConfigsResource', '0+', {}, [
        f('ResourceType', 'int8', '0+', { mapKey: true }),
        f('ResourceName', 'string', '0+', { mapKey: true }),
        f('Configs', '[]AlterableConfig', '0+', {}, [
          f('Name', 'string', '0+', { mapKey: true }),
          f('Value', 'string', '0+', { nullableVersions: '0+' }),
        ]),
      ]),
      f('ValidateOnly', 'bool', '0+'),
    ],
  },
  response: {
    apiKey: 33,
    kind: 'response',
    name: 'AlterConfigsResponse',
    validVersions: '0-2',
    flexibleVersions: '2+',
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
