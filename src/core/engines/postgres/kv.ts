import type {
  KvEntry,
  Lifetime,
  KvPutResult,
  OnceRequest,
} from '../../core.js';
import { type KvWrite, decideIncr, decidePut, decidePutIfAbsent, kvValueFromJson, kvValueToJson, liveOrNull, ONCE_MARKER_VALUE } from '../../rules/kv.js';
import type { Statements } from './database.js';
import { type PostgresStore } from './store.js';

interface KvRow {
  ns: string;
  key: string;
  value: unknown;
  version: number;
  expires_at: number | null;
}

function toEntry(row: KvRow): KvEntry {
  // Read as JSON text (see kv.sql), so a counter past 2^53 keeps its exact digits.
  return { ns: row.ns, key: row.key, value: kvValueFromJson(row.value as string), version: row.version, expiresAt: row.expires_at };
}

/** KV entries and once markers (sql/kv.sql). */
export class PostgresKv {
  constructor(private readonly store: PostgresStore) {}

  async get(req: { ns: string; key: string }): Promise<KvEntry | null> {
    const { ns, key } = req;
    const row = await this.store.db.statements.one<KvRow>('kv-get', [ns, key]);
    return row ? liveOrNull(toEntry(row), this.store.clock()) : null;
  }

  async getMany(req: { ns: string; keys: string[] }): Promise<(KvEntry | null)[]> {
    const { ns, keys } = req;
    if (keys.length === 0) return [];
    const rows = await this.store.db.statements.run<KvRow>('kv-get-many', [ns, keys]);
    const now = this.store.clock();
    return rows.map((r) => (r.key === null ? null : liveOrNull(toEntry(r), now)));
  }

  async getPrefix({ ns, prefix, limit }: { ns: string; prefix: string; limit: number }): Promise<KvEntry[]> {
    const rows = await this.store.db.statements.run<KvRow>('kv-get-prefix', [ns, prefix, this.store.clock(), limit]);
    return rows.map(toEntry);
  }

  async put(write: KvWrite): Promise<KvPutResult> {
    return this.kvDecide(write.ns, write.key, (current, now) => decidePut(current, write, now));
  }

  async putIfAbsent(write: Omit<KvWrite, 'expectedVersion'>): Promise<KvPutResult> {
    return this.kvDecide(write.ns, write.key, (current, now) => decidePutIfAbsent(current, write, now));
  }

  async delete(req: { ns: string; key: string }): Promise<{ deleted: boolean }> {
    const { ns, key } = req;
    return this.store.db.transaction(async (tx) => {
      const current = await lockKv(tx, ns, key);
      await tx.run('kv-delete', [ns, key]);
      return { deleted: liveOrNull(current, this.store.clock()) !== null };
    });
  }

  async incr(req: { ns: string; key: string; by: number; lifetime: Lifetime | undefined }): Promise<KvEntry> {
    const { ns, key, lifetime } = req;
    return this.store.db.transaction(async (tx) => {
      const entry = decideIncr(await lockKv(tx, ns, key), { ns, key, by: req.by, lifetime }, this.store.clock());
      await storeKv(tx, entry);
      return entry;
    });
  }

  async once(req: OnceRequest): Promise<{ won: boolean }> {
    const { ns, key, lifetime } = req;
    const decided = await this.kvDecide(ns, key, (current, now) => decidePutIfAbsent(current, { ns, key, value: ONCE_MARKER_VALUE, lifetime }, now));
    return { won: decided.applied };
  }

  private async kvDecide(ns: string, key: string, decide: (current: KvEntry | null, now: number) => KvPutResult): Promise<KvPutResult> {
    return this.store.db.transaction(async (tx) => {
      const decided = decide(await lockKv(tx, ns, key), this.store.clock());
      if (decided.applied && decided.entry) await storeKv(tx, decided.entry);
      return decided;
    });
  }


}

/** The entry as stored (expired or not), with the key's lock held until commit. */
export async function lockKv(tx: Statements, ns: string, key: string): Promise<KvEntry | null> {
  await tx.run('lock-kv-slot', [ns, key]);
  const row = await tx.one<KvRow>('kv-get', [ns, key]);
  return row ? toEntry(row) : null;
}

export async function storeKv(tx: Statements, entry: KvEntry): Promise<void> {
  await tx.run('kv-upsert', [entry.ns, entry.key, kvValueToJson(entry.value), entry.version, entry.expiresAt]);
}
