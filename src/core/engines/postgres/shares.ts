/**
 * The PostgreSQL engine's share-partition states (table share_partitions,
 * migrations 009 and 019; statements in sql/shares.sql). A load is one
 * statement for every share-partition a ShareFetch touches, with the
 * database's clock; a store is one statement that replaces each state only
 * where its version is still the one loaded (versions come from one
 * sequence), so two cores deciding on one share-partition never overwrite
 * each other, without holding a lock across the decision.
 *
 * In-flight records are stored as runs: [first offset, last offset, state,
 * delivery count, owner, deadline] for consecutive records alike in all but
 * the offset, so a lock on 500 records is one entry, not 500. (States
 * stored before migration 019 hold one [offset, state, delivery count,
 * owner, deadline] entry per record; both are read.)
 */
import type { LoadedSharePartition, ShareWrite } from '../../engine.js';
import type { InFlightRecord, RecordState, SharePartitionKey, SharePartitionState } from '../../groups/share/partition-state.js';
import type { Database } from './database.js';

type StoredRun = [number, number, RecordState, number, string | null, number];
type StoredRecord = [number, RecordState, number, string | null, number];

interface Row {
  group_name: string;
  queue: string;
  partition: number;
  start_offset: string;
  records: (StoredRun | StoredRecord)[];
}

export function toRecords(stored: (StoredRun | StoredRecord)[]): InFlightRecord[] {
  const records: InFlightRecord[] = [];
  for (const entry of stored) {
    if (entry.length === 5) {
      const [offset, state, deliveryCount, owner, deadline] = entry;
      records.push({ offset, state, deliveryCount, owner, deadline });
      continue;
    }
    const [first, last, state, deliveryCount, owner, deadline] = entry;
    for (let offset = first; offset <= last; offset++) records.push({ offset, state, deliveryCount, owner, deadline });
  }
  return records;
}

export function toRuns(records: InFlightRecord[]): StoredRun[] {
  const runs: StoredRun[] = [];
  for (const r of records) {
    const run = runs[runs.length - 1];
    if (run !== undefined && run[1] + 1 === r.offset && run[2] === r.state && run[3] === r.deliveryCount && run[4] === r.owner && run[5] === r.deadline) run[1] = r.offset;
    else runs.push([r.offset, r.offset, r.state, r.deliveryCount, r.owner, r.deadline]);
  }
  return runs;
}

const sameKey = (a: SharePartitionKey, b: { group_name: string; queue: string; partition: number }) => a.group === b.group_name && a.queue === b.queue && a.partition === b.partition;

export class PostgresShares {
  constructor(private readonly db: Database) {}

  async load(keys: SharePartitionKey[]): Promise<{ now: number; partitions: LoadedSharePartition[] }> {
    if (keys.length === 0) return { now: Date.now(), partitions: [] };
    const asked = JSON.stringify(keys.map((k, i) => ({ i, group_name: k.group, queue: k.queue, partition: k.partition })));
    const rows = await this.db.statements.run<{ start_offset: string | null; records: Row['records'] | null; version: string | null; now: string }>('share-load', [asked]);
    const now = Number(rows[0]!.now);
    const partitions = keys.map((_, i): LoadedSharePartition => {
      const row = rows[i];
      if (row === undefined || row.version === null) return { state: null, version: 0 };
      return { state: { startOffset: Number(row.start_offset), records: toRecords(row.records!) }, version: Number(row.version) };
    });
    return { now, partitions };
  }

  async store(writes: ShareWrite[]): Promise<boolean[]> {
    if (writes.length === 0) return [];
    const rows = JSON.stringify(writes.map((w) => ({
      group_name: w.key.group, queue: w.key.queue, partition: w.key.partition, expected: w.expected,
      start_offset: w.state?.startOffset ?? null, records: w.state === null ? null : toRuns(w.state.records),
    })));
    const stored = await this.db.statements.run<{ group_name: string; queue: string; partition: number }>('share-store', [rows]);
    return writes.map((w) => (w.state === null && w.expected === 0) || stored.some((s) => sameKey(w.key, s)));
  }

  async list(group: string | null): Promise<(SharePartitionKey & SharePartitionState)[]> {
    const rows = await this.db.statements.run<Row>('share-list', [group]);
    return rows.map((r) => ({ group: r.group_name, queue: r.queue, partition: r.partition, startOffset: Number(r.start_offset), records: toRecords(r.records) }));
  }
}
