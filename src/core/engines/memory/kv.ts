import type {
  KvEntry,
  KvIncrRequest,
  KvPutRequest,
  KvPutResult,
  OnceRequest,
} from '../../core.js';
import { requireArray, requireInteger } from '../../rules/arguments.js';
import { checkKvWrite, decideIncr, decidePut, decidePutIfAbsent, liveOrNull, ONCE_MARKER_VALUE, validateExpectedVersion, validateLifetime, validateOptionalLifetime } from '../../rules/kv.js';
import { validateKvKey, validateKvNamespace, validateKvPrefix } from '../../rules/names.js';
import { kvSlot } from '../../rules/transaction.js';
import type { MemoryStore } from './store.js';

const MAX_PREFIX_LIMIT = 10_000;

/** KV entries and once markers. */
export class MemoryKv {
  constructor(private readonly store: MemoryStore) {}

  async get(req: { ns: string; key: string }): Promise<KvEntry | null> {
    this.store.checkOpen();
    const slot = kvSlot(validateKvNamespace(req?.ns), validateKvKey(req.key));
    return this.kvRead(slot);
  }

  async getMany(req: { ns: string; keys: string[] }): Promise<(KvEntry | null)[]> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const keys = requireArray<string>(req.keys, 'keys').map((k) => validateKvKey(k));
    return keys.map((k) => this.kvRead(kvSlot(ns, k)));
  }

  async getPrefix(req: { ns: string; prefix: string; limit?: number }): Promise<KvEntry[]> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const prefix = validateKvPrefix(req.prefix);
    const limit = req.limit === undefined ? 1000 : requireInteger(req.limit, 'limit', 1, MAX_PREFIX_LIMIT);
    const now = this.store.clock();
    const found: KvEntry[] = [];
    for (const entry of this.store.kv.values()) {
      if (entry.ns === ns && entry.key.startsWith(prefix) && liveOrNull(entry, now)) found.push(entry);
    }
    return found
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, limit)
      .map((e) => structuredClone(e));
  }

  async put(req: KvPutRequest): Promise<KvPutResult> {
    this.store.checkOpen();
    const write = checkKvWrite(req);
    const expectedVersion = validateExpectedVersion(req.expectedVersion);
    return this.kvApply(decidePut(this.store.kv.get(kvSlot(write.ns, write.key)) ?? null, { ...write, expectedVersion }, this.store.clock()));
  }

  async putIfAbsent(req: Omit<KvPutRequest, 'expectedVersion'>): Promise<KvPutResult> {
    this.store.checkOpen();
    const write = checkKvWrite(req);
    return this.kvApply(decidePutIfAbsent(this.store.kv.get(kvSlot(write.ns, write.key)) ?? null, write, this.store.clock()));
  }

  async delete(req: { ns: string; key: string }): Promise<{ deleted: boolean }> {
    this.store.checkOpen();
    const slot = kvSlot(validateKvNamespace(req?.ns), validateKvKey(req.key));
    const existed = this.kvRead(slot) !== null;
    this.store.writeKv(slot, null);
    return { deleted: existed };
  }

  async incr(req: KvIncrRequest): Promise<KvEntry> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const lifetime = validateOptionalLifetime(req.lifetime);
    const entry = decideIncr(this.store.kv.get(kvSlot(ns, key)) ?? null, { ns, key, by: req.by, lifetime }, this.store.clock());
    this.store.checkKvRoom(kvSlot(ns, key), entry);
    this.store.writeKv(kvSlot(ns, key), entry);
    return structuredClone(entry);
  }

  async once(req: OnceRequest): Promise<{ won: boolean }> {
    this.store.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const lifetime = validateLifetime(req.lifetime);
    const decided = decidePutIfAbsent(this.store.kv.get(kvSlot(ns, key)) ?? null, { ns, key, value: ONCE_MARKER_VALUE, lifetime }, this.store.clock());
    this.kvApply(decided);
    return { won: decided.applied };
  }

  private kvApply(decided: KvPutResult): KvPutResult {
    if (decided.applied && decided.entry) {
      const slot = kvSlot(decided.entry.ns, decided.entry.key);
      this.store.checkKvRoom(slot, decided.entry);
      this.store.writeKv(slot, decided.entry);
    }
    return structuredClone(decided);
  }

  /** Stores or (null) removes an entry, keeping the size limit's count. */

  private kvRead(slot: string): KvEntry | null {
    const entry = liveOrNull(this.store.kv.get(slot), this.store.clock());
    return entry ? structuredClone(entry) : null;
  }
}
