/** The Core interface (../core.ts), the KV store and once markers: requests and results, plain data. */

export interface KvEntry {
  ns: string;
  key: string;
  /** Any JSON value. */
  value: unknown;
  /** Increases by one with every write; optimistic updates compare it. */
  version: number;
  /** Epoch ms, or null for forever. */
  expiresAt: number | null;
}

/** A lifetime: `ttlMs` or `forever`. Exactly one. */
export type Lifetime = { ttlMs: number } | { forever: true };

export interface KvPutRequest {
  ns: string;
  key: string;
  value: unknown;
  lifetime?: Lifetime;
  /** When set, the put applies only if the entry's current version equals it (0 = absent). */
  expectedVersion?: number;
}

export interface KvPutResult {
  /** False when expectedVersion did not match (putIfAbsent: the key existed). */
  applied: boolean;
  entry: KvEntry | null;
}

export interface KvIncrRequest {
  ns: string;
  key: string;
  by: number;
  lifetime?: Lifetime;
}

export interface OnceRequest {
  ns: string;
  key: string;
  lifetime: Lifetime;
}
