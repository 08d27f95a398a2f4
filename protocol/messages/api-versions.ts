// ApiVersions (API key 18): Tells a client which APIs and versions the broker speaks.
import { field as f, type ApiDef } from '../schema/definition.js';

export const ApiVersions = {
  apiKey: 18,
  name: 'ApiVersions',
  request: {
    apiKey: 18,
    kind: 'request',
    name: 'ApiVersionsRequest',
    validVersions: '0-4',
    flexibleVersions: '3+',
    fields: [
      f('ClientSoftwareName', 'string', '3+', { ignorable: true }),
      f('ClientSoftwareVersion', 'string', '3+', { ignorable: true }),
    ],
  },
  response: {
    apiKey: 18,
    kind: 'response',
    name: 'ApiVersionsResponse',
    validVersions: '0-4',
    flexibleVersions: '3+',
    fields: [
      f('ErrorCode', 'int16', '0+'),
      f('ApiKeys', '[]ApiVersion', '0+', {}, [
        f('ApiKey', 'int16', '0+', { mapKey: true }),
        f('MinVersion', 'int16', '0+'),
        f('MaxVersion', 'int16', '0+'),
      ]),
      f('ThrottleTimeMs', 'int32', '1+', { ignorable: true }),
      f('SupportedFeatures', '[]SupportedFeatureKey', '3+', { ignorable: true, tag: 0, taggedVersions: '3+' }, [
        f('Name', 'string', '3+', { mapKey: true }),
        f('MinVersion', 'int16', '3+'),
        f('MaxVersion', 'int16', '3+'),
      ]),
      f('FinalizedFeaturesEpoch', 'int64', '3+', { default: -1n, ignorable: true, tag: 1, taggedVersions: '3+' }),
      f('FinalizedFeatures', '[]FinalizedFeatureKey', '3+', { ignorable: true, tag: 2, taggedVersions: '3+' }, [
        f('Name', 'string', '3+', { mapKey: true }),
        f('MaxVersionLevel', 'int16', '3+'),
        f('MinVersionLevel', 'int16', '3+'),
      ]),
      f('ZkMigrationReady', 'bool', '3+', { default: false, ignorable: true, tag: 3, taggedVersions: '3+' }),
    ],
  },
} satisfies ApiDef;
