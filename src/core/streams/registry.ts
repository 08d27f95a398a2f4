import { randomUUID } from 'node:crypto';
import type { Core, StreamsRegisterRequest, StreamsRegisterResult } from '../core.js';
import { queryIdKey, queryKey, queryStatePrefix, requireText, STREAMS_NAMESPACE as ns, type QueryRecord } from './keys.js';

/**
 * Registering a streaming query, as Queen's clients do once when a stream
 * starts: the first registration of a name mints its query id; a later one
 * with the same operator-chain fingerprint (configHash) gets the same id; a
 * changed fingerprint is refused unless the caller consents to `reset`, which
 * drops the query's state and keeps its id.
 */
export async function registerQuery(core: Core, req: StreamsRegisterRequest): Promise<StreamsRegisterResult> {
  const name = requireText(req?.name, 'name');
  const wanted = { name, sourceQueue: requireText(req.sourceQueue, 'sourceQueue'), sinkQueue: req.sinkQueue || null, configHash: requireText(req.configHash, 'configHash') };
  for (let attempt = 0; ; attempt++) {
    const entry = await core.kvGet({ ns, key: queryKey(name) });
    if (!entry) {
      const record: QueryRecord = { queryId: randomUUID(), ...wanted };
      const created = await core.transaction({
        operations: [
          { op: 'kv.putIfAbsent', ns, key: queryKey(name), value: record, lifetime: { forever: true }, required: true },
          { op: 'kv.put', ns, key: queryIdKey(record.queryId), value: { name }, lifetime: { forever: true } },
        ],
      });
      if (created.success) return { success: true, queryId: record.queryId, name, configHash: record.configHash, fresh: true, reset: false };
      if (attempt < 3) continue; // another registration of the name won: read it
    }
    const stored = entry?.value as QueryRecord | undefined;
    if (!entry || !stored) throw new Error(`The registration of streaming query "${name}" kept changing under this one.`);
    const sameChain = stored.configHash === wanted.configHash;
    if (!sameChain && req.reset !== true) {
      return {
        success: false, queryId: stored.queryId, name,
        error: `config_hash mismatch: streaming query "${name}" was registered with config_hash ${stored.configHash} and now comes with ${wanted.configHash} (its operator chain changed); pass reset: true to drop its state, or register it under a new name.`,
      };
    }
    if (!sameChain) await dropState(core, stored.queryId);
    const updated = await core.kvPut({ ns, key: queryKey(name), value: { ...stored, ...wanted }, lifetime: { forever: true }, expectedVersion: entry.version });
    if (!updated.applied && attempt < 3) continue;
    return { success: true, queryId: stored.queryId, name, configHash: wanted.configHash, fresh: false, reset: !sameChain };
  }
}

/** Deletes every state row of a query, a page at a time (a crash midway leaves the old fingerprint, so the next reset finishes it). */
async function dropState(core: Core, queryId: string): Promise<void> {
  for (;;) {
    const rows = await core.kvGetPrefix({ ns, prefix: queryStatePrefix(queryId), limit: 1000 });
    if (rows.length === 0) return;
    await core.transaction({ operations: rows.map((r) => ({ op: 'kv.delete' as const, ns, key: r.key })) });
  }
}

/** The registration a query id names, or null. */
export async function queryById(core: Core, queryId: string): Promise<QueryRecord | null> {
  const pointer = await core.kvGet({ ns, key: queryIdKey(requireText(queryId, 'queryId')) });
  const name = (pointer?.value as { name?: string } | undefined)?.name;
  if (!name) return null;
  const record = (await core.kvGet({ ns, key: queryKey(name) }))?.value as QueryRecord | undefined;
  return record && record.queryId === queryId ? record : null;
}
