// DescribeCluster: the cluster id, the controller and the brokers: the live
// gateways at their advertised addresses (this one alone without a cluster),
// the lowest node id as controller (../brokers.ts).
//
// Choices:
// - ClusterAuthorizedOperations, when asked for, is what the principal may do
//   on the cluster, or none without DESCRIBE on it, as Kafka answers; no ACL
//   is needed to ask.
//
// Versions: v1 adds EndpointType (KIP-919). Brokers (1) is the only kind of
// endpoint here: a request for controller endpoints (2) answers
// MISMATCHED_ENDPOINT_TYPE, any other value UNSUPPORTED_ENDPOINT_TYPE, as a
// Kafka broker does.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeCluster } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { clusterOperations } from '../../access/authorizer.js';
import { authorizedOperations } from '../../access/acl-operations.js';
import { NONE } from '../kafka-errors.js';
import { controllerOf, listedBrokers } from '../brokers.js';

const BROKER_ENDPOINT = 1;

const CONTROLLER_ENDPOINT = 2;

export const describeCluster: ApiHandler<typeof DescribeCluster> = {
  api: DescribeCluster,
  versions: '0-1',
  async handle(request, ctx) {
    const { clusterId } = ctx.settings;
    const endpointType: number = request.endpointType;
    const refused = { throttleTimeMs: 0, endpointType: BROKER_ENDPOINT, clusterId: '', controllerId: -1, brokers: [] };
    if (endpointType === CONTROLLER_ENDPOINT) {
      return { ...refused, errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE, errorMessage: 'This gateway serves broker endpoints only; ask for EndpointType 1 (brokers). It is its own controller.' };
    }
    if (endpointType !== BROKER_ENDPOINT) {
      return { ...refused, errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: `Endpoint type ${endpointType} is not one Kafka defines; ask for 1 (brokers).` };
    }
    const brokers = listedBrokers(ctx);
    return {
      throttleTimeMs: 0,
      endpointType,
      clusterId,
      errorCode: NONE,
      errorMessage: null,
      controllerId: controllerOf(brokers),
      brokers: brokers.map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      clusterAuthorizedOperations: authorizedOperations(request.includeClusterAuthorizedOperations, clusterOperations(ctx.access)),
    };
  },
};
