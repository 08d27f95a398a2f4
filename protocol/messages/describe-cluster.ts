// DescribeCluster (API key 60): Describes the cluster: id, controller and brokers.
import { field as f, type ApiDef } from '../schema/definition.js';

export const DescribeCluster = {
  apiKey: 60,
  name: 'DescribeCluster',
  request: {
    apiKey: 60,
    kind: 'request',
    name: 'DescribeClusterRequest',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('IncludeClusterAuthorizedOperations', 'bool', '0+'),
      f('EndpointType', 'int8', '1+', { default: 1 }),
    ],
  },
  response: {
    apiKey: 60,
    kind: 'response',
    name: 'DescribeClusterResponse',
    validVersions: '0-1',
    flexibleVersions: '0+',
    fields: [
      f('ThrottleTimeMs', 'int32', '0+'),
      f('ErrorCode', 'int16', '0+'),
      f('ErrorMessage', 'string', '0+', { nullableVersions: '0+', default: null }),
      f('EndpointType', 'int8', '1+', { default: 1 }),
      f('ClusterId', 'string', '0+'),
      f('ControllerId', 'int32', '0+', { default: -1 }),
      f('Brokers', '[]DescribeClusterBroker', '0+', {}, [
        f('BrokerId', 'int32', '0+', { mapKey: true }),
        f('Host', 'string', '0+'),
        f('Port', 'int32', '0+'),
        f('Rack', 'string', '0+', { nullableVersions: '0+', default: null }),
      ]),
      f('ClusterAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
    ],
  },
} satisfies ApiDef;
