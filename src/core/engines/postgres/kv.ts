import type {
  KvEntry,
  KvIncrRequest,
  KvPutRequest,
  KvPutResult,
  OnceRequest,
} from '../../core.js';
import { requireArray, requireInteger } from '../../rules/arguments.js';
import { checkKvWrite, decideIncr, decidePut, decidePutIfAbsent, kvValueFromJson, kvValueToJson, liveOrNull, ONCE_MARKER_VALUE, validateExpectedVersion, validateLifetime, validateOptionalLifetime } from '../../rules/kv.js';
import { validateKvKey, validateKvNamespace, validateKvPrefix } from '../../rules/names.js';
import type { Statements } from './database.js';
import { type PostgresStore } from './store.js';

interface KvRow {
  ns: string;
  key: string;
  value: unknown;
  version: number;
  expires_at: number | null;
}

const MAX_PREFIX_LIMIT = 10_000;

function toEntry(row: KvRow): KvEntry {
  // Read as JSON text (see kv.sql), so a counter past 2^53 keeps its exact digits.
  return { ns: row.ns, key: row.key, value: kvValueFromJson(row.value as string), version: row.version, expiresAt: row.expires_at };
}

/** KV entries and once markers (sql/kv.sql). */
export class PostgresKv {
  constructor(private readonly store: PostgresStore) {}

  async get(req: { ns: string; key: string }): Promise<KvEntry | null> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const row = await this.store.db.statements.one<KvRow>('kv-get', [ns, key]);
    return row ? liveOrNull(toEntry(row), this.store.clock()) : null;
  }

  async getMany(req: { ns: string; keys: string[] }): Promise<(KvEntry | null)[]> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const keys = requireArray<string>(req.keys, 'keys').map((k) => validateKvKey(k));
    if (keys.length === 0) return [];
    const rows = await this.store.db.statements.run<KvRow>('kv-get-many', [ns, keys]);
    const now = this.store.clock();
    return rows.map((r) => (r.key === null ? null : liveOrNull(toEntry(r), now)));
  }

  async getPrefix(req: { ns: string; prefix: string; limit?: number }): Promise<KvEntry[]> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const prefix = validateKvPrefix(req.prefix);
    const limit = req.limit === undefined ? 1000 : requireInteger(req.limit, 'limit', 1, MAX_PREFIX_LIMIT);
    const rows = await this.store.db.statements.run<KvRow>('kv-get-prefix', [ns, prefix, this.store.clock(), limit]);
    return rows.map(toEntry);
  }

  async put(req: KvPutRequest): Promise<KvPutResult> {
    this.store.checkOpen();
    const write = checkKvWrite(req);
    const expectedVersion = validateExpectedVersion(req.expectedVersion);
    return this.kvDecide(write.ns, write.key, (current, now) => decidePut(current, { ...write, expectedVersion }, now));
  }

  async putIfAbsent(req: Omit<KvPutRequest, 'expectedVersion'>): Promise<KvPutResult> {
    this.store.checkOpen();
    const write = checkKvWrite(req);
    return this.kvDecide(write.ns, write.key, (current, now) => decidePutIfAbsent(current, write, now));
  }

  async delete(req: { ns: string; key: string }): Promise<{ deleted: boolean }> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    return this.store.db.transaction(async (tx) => {
      const current = await lockKv(tx, ns, key);
      await tx.run('kv-delete', [ns, key]);
      return { deleted: liveOrNull(current, this.store.clock()) !== null };
    });
  }

  async incr(req: KvIncrRequest): Promise<KvEntry> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const lifetime = validateOptionalLifetime(req.lifetime);
    return this.store.db.transaction(async (tx) => {
      const entry = decideIncr(await lockKv(tx, ns, key), { ns, key, by: req.by, lifetime }, this.store.clock());
      await storeKv(tx, entry);
      return entry;
    });
  }

  async once(req: OnceRequest): Promise<{ won: boolean }> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const lifetime = validateLifetime(req.lifetime);
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
