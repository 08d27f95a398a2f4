import { partitionLeader } from '../cluster/leadership.js';
import type { BrokerAddress, HandlerContext } from './handler.js';

/**
 * The brokers a client is told of (Metadata, DescribeCluster) and who leads
 * each partition, from the cluster view (src/cluster/membership.ts): every
 * live gateway, at its address for the listener the client came in on (this
 * gateway at its own, the others at theirs; a gateway without that listener
 * is left out, as Kafka lists only brokers with the listener asked for).
 * Without a cluster view, this gateway alone, as before.
 *
 * Every listed gateway is a replica and in sync: the store, not the
 * gateways, holds the data, so the replication factor a client sees is the
 * number of live gateways. Any gateway accepts Produce and Fetch for any
 * partition, so a client whose metadata is stale never loses a write; the
 * leader only spreads the load. The leader epoch stays 0: there is one log,
 * never truncated by a leader change.
 */

/** The brokers listed on this connection's listener, by node id. */
export function listedBrokers(ctx: HandlerContext): BrokerAddress[] {
  const { advertised, cluster } = ctx.settings;
  if (!cluster) return [advertised];
  const brokers: BrokerAddress[] = [];
  for (const node of cluster.liveNodes()) {
    if (node.nodeId === advertised.nodeId) {
      brokers.push(advertised);
      continue;
    }
    const address = node.listeners[ctx.connection.listener];
    if (address) brokers.push({ nodeId: node.nodeId, host: address.host, port: address.port, rack: node.rack });
  }
  return brokers;
}

/** The controller clients are told of: the lowest live node id, the same answer from every gateway. */
export function controllerOf(brokers: readonly BrokerAddress[]): number {
  return brokers.length === 0 ? -1 : Math.min(...brokers.map((b) => b.nodeId));
}

/** A partition as Metadata and DescribeTopicPartitions describe it: its leader first among the replicas. */
export function partitionLeadership(brokerIds: readonly number[], topic: string, partitionIndex: number) {
  const leaderId = partitionLeader(brokerIds, topic, partitionIndex);
  const replicaNodes = [leaderId, ...brokerIds.filter((id) => id !== leaderId)];
  return {
    errorCode: 0,
    partitionIndex,
    leaderId,
    leaderEpoch: 0,
    replicaNodes,
    isrNodes: replicaNodes,
    offlineReplicas: [] as number[],
  };
}
