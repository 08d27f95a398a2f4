import type { BrokerAddress, HandlerContext } from './handler.js';

/**
 * Which gateway a client is sent to for a group or a transactional id.
 * The core names the core node holding the key's coordinator lease; the
 * client must reach a gateway attached to that core, because only that core
 * serves the key (the others answer NOT_COORDINATOR, and the client asks
 * FindCoordinator again, as with Kafka). The node registry
 * (src/cluster/membership.ts) says which core each live gateway uses.
 *
 * A gateway alone knows only itself: the owner is its own core, or no
 * gateway it knows of (COORDINATOR_NOT_AVAILABLE until the lease runs out
 * and its own core takes it).
 */

/**
 * The core nodes clients can reach now, so that the core takes over at once
 * a lease held by any other (a core whose gateways are all gone); null when
 * this gateway cannot tell: alone, a gateway that does not say its core, or
 * a view of this gateway only (Redis away: taking every lease for its own
 * core would only take them from cores that still serve them).
 */
export function reachableCores(ctx: HandlerContext): string[] | null {
  const live = ctx.settings.cluster?.liveNodes();
  if (!live || live.length < 2) return null;
  const cores = new Set<string>();
  for (const node of live) {
    if (node.coreNode === undefined) return null;
    cores.add(node.coreNode);
  }
  return [...cores];
}

/**
 * Records the core's node id as the core answered it: a core that restarted
 * (split layout: the gateway reconnected to it) holds leases under a new id,
 * and the registry entry carries it from the next heartbeat on.
 */
export function noteOwnCore(ctx: HandlerContext, coreNode: string): void {
  const self = ctx.settings.cluster?.self;
  if (self && self.coreNode !== coreNode) self.coreNode = coreNode;
}

/**
 * The gateway to send a client to for a key whose lease `owner` holds, on
 * the listener the client came in on: this one when its core holds it, else
 * the live gateway of that core with the lowest node id (the same answer
 * from every gateway); null when no live gateway uses that core.
 */
export function coordinatorGateway(ctx: HandlerContext, owner: string, selfCore: string): BrokerAddress | null {
  if (owner === selfCore) return ctx.settings.advertised;
  const candidates = (ctx.settings.cluster?.liveNodes() ?? []).filter((n) => n.coreNode === owner && n.listeners[ctx.connection.listener] !== undefined);
  if (candidates.length === 0) return null;
  const chosen = candidates.reduce((a, b) => (b.nodeId < a.nodeId ? b : a));
  const address = chosen.listeners[ctx.connection.listener]!;
  return { nodeId: chosen.nodeId, host: address.host, port: address.port, rack: chosen.rack };
}
