import type {
  KvEntry,
  Lifetime,
  KvPutResult,
  OnceRequest,
} from '../../core.js';
import { type KvWrite, decideIncr, decidePut, decidePutIfAbsent, liveOrNull, ONCE_MARKER_VALUE } from '../../rules/kv.js';
import { kvSlot } from '../../rules/transaction.js';
import type { MemoryStore } from './store.js';

/** KV entries and once markers. */
export class MemoryKv {
  constructor(private readonly store: MemoryStore) {}

  async get(req: { ns: string; key: string }): Promise<KvEntry | null> {
    const slot = kvSlot(req.ns, req.key);
    return this.kvRead(slot);
  }

  async getMany(req: { ns: string; keys: string[] }): Promise<(KvEntry | null)[]> {
    const { ns, keys } = req;
    return keys.map((k) => this.kvRead(kvSlot(ns, k)));
  }

  async getPrefix({ ns, prefix, limit }: { ns: string; prefix: string; limit: number }): Promise<KvEntry[]> {
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

  async put(write: KvWrite): Promise<KvPutResult> {
    return this.kvApply(decidePut(this.store.kv.get(kvSlot(write.ns, write.key)) ?? null, write, this.store.clock()));
  }

  async putIfAbsent(write: Omit<KvWrite, 'expectedVersion'>): Promise<KvPutResult> {
    return this.kvApply(decidePutIfAbsent(this.store.kv.get(kvSlot(write.ns, write.key)) ?? null, write, this.store.clock()));
  }

  async delete(req: { ns: string; key: string }): Promise<{ deleted: boolean }> {
    const slot = kvSlot(req.ns, req.key);
    const existed = this.kvRead(slot) !== null;
    this.store.writeKv(slot, null);
    return { deleted: existed };
  }

  async incr(req: { ns: string; key: string; by: number; lifetime: Lifetime | undefined }): Promise<KvEntry> {
    const { ns, key, lifetime } = req;
    const entry = decideIncr(this.store.kv.get(kvSlot(ns, key)) ?? null, { ns, key, by: req.by, lifetime }, this.store.clock());
    this.store.checkKvRoom(kvSlot(ns, key), entry);
    this.store.writeKv(kvSlot(ns, key), entry);
    return structuredClone(entry);
  }

  async once(req: OnceRequest): Promise<{ won: boolean }> {
    const { ns, key, lifetime } = req;
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
