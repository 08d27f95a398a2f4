import type { BrokerAddress, HandlerContext } from './handler.js';

/**
 * Which gateway a client is sent to for a group or a transactional id.
 * The core names the core node holding the key's coordinator lease; the
 * client must reach a gateway attached to that core, because only that core
 * serves the key (the others answer NOT_COORDINATOR, and the client asks
 * FindCoordinator again, as with Kafka).
 *
 * A gateway alone knows only itself: the owner is its own core, or no
 * gateway it knows of (COORDINATOR_NOT_AVAILABLE until the lease runs out
 * and its own core takes it).
 */

/**
 * The core nodes clients can reach now, for the core to take over a lease
 * held by any other at once; null when this gateway does not know the
 * others (alone, or the registry does not say which core each uses).
 */
export function reachableCores(_ctx: HandlerContext): string[] | null {
  return null;
}

/** The gateway to send a client to for a key whose lease `owner` holds; null when no live gateway uses that core. */
export function coordinatorGateway(ctx: HandlerContext, owner: string, selfCore: string): BrokerAddress | null {
  return owner === selfCore ? ctx.settings.advertised : null;
}
