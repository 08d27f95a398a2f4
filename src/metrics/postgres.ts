import { Counter, Gauge } from 'prom-client';
import { HistogramFamily, type HistogramSlot } from './families.js';
import { processRegistry } from './process.js';

/**
 * The postgres engine's connection pools and statements. Each pool is read
 * when scraped; each named statement (from the engine's .sql files) has its
 * own latency histogram, resolved once per name.
 */

/** What node-postgres's Pool reports about itself. */
export interface PoolFigures {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

const pools = new Set<PoolFigures>();

/** Reports `pool` from now on; the function returned stops it (when the pool ends). */
export function watchPool(pool: PoolFigures): () => void {
  pools.add(pool);
  return () => pools.delete(pool);
}

new Gauge({
  name: 'queen_postgres_pool_connections',
  help: 'PostgreSQL pool connections of this process, by state: total (open), idle (open and free), waiting (callers queued for a connection).',
  labelNames: ['state'],
  registers: [processRegistry],
  collect() {
    let total = 0;
    let idle = 0;
    let waiting = 0;
    for (const pool of pools) {
      total += pool.totalCount;
      idle += pool.idleCount;
      waiting += pool.waitingCount;
    }
    this.set({ state: 'total' }, total);
    this.set({ state: 'idle' }, idle);
    this.set({ state: 'waiting' }, waiting);
  },
});

// Statements take a millisecond or so on a healthy database; tens of seconds is the statement timeout.
const STATEMENT_BOUNDS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const statementDuration = new HistogramFamily('queen_postgres_statement_duration_seconds', 'Time a named SQL statement of the postgres engine took, waiting for a pooled connection included, in seconds (failed ones too).', ['statement'], STATEMENT_BOUNDS_S, processRegistry);

const byStatement = new Map<string, HistogramSlot>();

export function statementLatency(name: string): HistogramSlot {
  let slot = byStatement.get(name);
  if (!slot) byStatement.set(name, (slot = statementDuration.child(name)));
  return slot;
}

const commitsInDoubt = new Counter({
  name: 'queen_postgres_commits_in_doubt_total',
  help: 'Commits answered as unavailable because their outcome was in doubt: no answer to COMMIT, or a commit that may not have reached a synchronous standby (docs/failover.md). Each was retried by its client and answered from the ledgers.',
  registers: [processRegistry],
});

/** One commit whose outcome the engine could not know (database.ts). */
export function commitInDoubt(): void {
  commitsInDoubt.inc();
}
