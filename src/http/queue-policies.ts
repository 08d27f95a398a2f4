/**
 * What the HTTP API itself does per queue, from the queue's Queen metadata
 * (./queue-options.ts): its `maxSize` (./capacity.ts) and whether its
 * payloads are encrypted (./payload-cipher.ts). Read for every push, so kept
 * for CACHE_MS per gateway; configuring a queue here forgets its entry at
 * once, one configured on another gateway is followed within CACHE_MS.
 */
import type { Core, PushItem } from '../core/core.js';
import { HttpError } from './errors.js';
import type { PayloadCipher } from './payload-cipher.js';
import { readMetadata, type QueenMetadata } from './queue-options.js';

const CACHE_MS = 1_000;
const cached = new WeakMap<Core, Map<string, { metadata: QueenMetadata; readAt: number }>>();

export function forgetQueuePolicies(core: Core, queue: string): void {
  cached.get(core)?.delete(queue);
}

export async function queuePolicies(core: Core, queues: readonly string[]): Promise<Map<string, QueenMetadata>> {
  let cache = cached.get(core);
  if (!cache) cached.set(core, (cache = new Map()));
  const now = Date.now();
  const wanted = [...new Set(queues)];
  const stale = wanted.filter((q) => !(now - (cache.get(q)?.readAt ?? -Infinity) < CACHE_MS));
  const read = await readMetadata(core, stale);
  stale.forEach((q, i) => cache.set(q, { metadata: read[i] ?? {}, readAt: now }));
  return new Map(wanted.map((q) => [q, cache.get(q)!.metadata]));
}

/** The items with the payloads of queues that encrypt sealed; refused when such a queue meets a server without the key. */
export async function sealPayloads(core: Core, cipher: PayloadCipher | null, items: PushItem[]): Promise<PushItem[]> {
  const policies = await queuePolicies(core, items.map((i) => i.queue));
  return items.map((item) => {
    if (!policies.get(item.queue)?.encryptionEnabled) return item;
    if (!cipher) {
      throw new HttpError(503, 'unavailable', `Queue "${item.queue}" encrypts its payloads and this server has no encryption key: start it with --encryption-key (or QUEEN_ENCRYPTION_KEY) set to the key the queue's messages were sealed with. Nothing was pushed.`);
    }
    return { ...item, payload: cipher.seal(item.payload) };
  });
}
