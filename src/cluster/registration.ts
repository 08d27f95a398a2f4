/**
 * A node's place in the registry in Redis: the cluster id agreed there, the
 * node listed under it with its heartbeat (./membership.ts), and leaving.
 */
import type { Logger } from 'pino';
import type { RedisConnection } from '../redis/redis.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_NODE_TTL_MS, RedisMembership, type ClusterNode } from './membership.js';

export interface Registration {
  connection: RedisConnection;
  membership: RedisMembership;
  /** The cluster id in the registry: the first node's, which later ones adopt. */
  clusterId: string;
}

export interface RegistrationOptions {
  redisUrl: string;
  keyPrefix?: string | undefined;
  nodeTtlMs?: number | undefined;
  /** While false the node withdraws from the registry (./membership.ts). */
  serving?: (() => boolean) | undefined;
  /** The cluster id this node proposes, and whether it was configured rather than made up. */
  proposedClusterId: string;
  clusterIdConfigured: boolean;
  log: Logger;
}

/** This gateway as the registry lists it: its advertised addresses, its core, and the id its core holds leases under. */
export function registeredNode(
  nodeId: number,
  advertised: { host: string; port: number; rack: string | null },
  listeners: readonly { name: string; advertised: { host: string; port: number } }[],
  core: string,
  coreNode: ClusterNode['coreNode'],
): ClusterNode {
  const { host, port, rack } = advertised;
  const addresses = Object.fromEntries(listeners.map((l) => [l.name, { host: l.advertised.host, port: l.advertised.port }]));
  return { nodeId, host, port, rack, listeners: addresses, core, coreNode, startedAt: Date.now() };
}

export async function joinRegistry(self: ClusterNode, options: RegistrationOptions): Promise<Registration> {
  const { log } = options;
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  // Loaded only by a cluster member, so a gateway alone never loads the Redis client.
  const { openRedis } = await import('../redis/redis.js');
  const connection = await openRedis(options.redisUrl, 'registry', log);
  try {
    const clusterId = await RedisMembership.clusterId(connection, keyPrefix, options.proposedClusterId, options.clusterIdConfigured, log);
    const ttlMs = options.nodeTtlMs ?? DEFAULT_NODE_TTL_MS;
    const membership = await RedisMembership.join(connection, self, { ttlMs, keyPrefix, log, ...(options.serving ? { serving: options.serving } : {}) });
    return { connection, membership, clusterId };
  } catch (e) {
    await connection.close();
    throw e;
  }
}

export async function leaveRegistry(registration: Registration | null): Promise<void> {
  if (!registration) return;
  await registration.membership.leave();
  await registration.connection.close();
}
