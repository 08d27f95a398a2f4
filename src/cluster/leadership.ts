/**
 * Which gateway Metadata names as a partition's leader. Every gateway
 * accepts Produce and Fetch for every partition (the core serializes
 * appends), so leadership only spreads clients' connections and load over
 * the gateways; it must still be the same answer from every gateway, and
 * move as little as possible when one joins or dies. Rendezvous hashing
 * gives both: each partition goes to the live node with the highest score
 * for (topic, partition, node), so a node's death moves only its own
 * partitions and a node's arrival takes about 1/n of everyone's.
 */

/** FNV-1a over the UTF-16 code units, then murmur3's finalizer so close inputs spread. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The node among `nodeIds` that leads `topic`'s partition `partition`; -1 when there is none. */
export function partitionLeader(nodeIds: readonly number[], topic: string, partition: number): number {
  let best = -1;
  let bestScore = -1;
  for (const nodeId of nodeIds) {
    const score = hash32(`${topic}\u0000${partition}\u0000${nodeId}`);
    // Ties (vanishingly rare) go to the lower id, so every gateway picks the same one.
    if (score > bestScore || (score === bestScore && nodeId < best)) {
      best = nodeId;
      bestScore = score;
    }
  }
  return best;
}

/**
 * A node id for a gateway not given one, derived from its advertised
 * address, so a restarted gateway comes back under the same id (clients'
 * cached metadata stays right) without anyone numbering the gateways.
 * Kafka's own generated ids start above 1000; these do too.
 */
export function derivedNodeId(host: string, port: number): number {
  return 1001 + (hash32(`${host.toLowerCase()}:${port}`) % 2_000_000_000);
}
