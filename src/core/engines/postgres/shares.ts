/**
 * The PostgreSQL engine's share-partition states (table share_partitions,
 * migration 009; statements in sql/shares.sql). An update is one database
 * transaction under an advisory lock on the share-partition's key, so two
 * cores deciding on one partition take turns; its clock is the database's.
 * In-flight records are stored compactly as [offset, state, delivery count,
 * owner, deadline] arrays in one jsonb column (a partition holds at most
 * share.partition.max.record.locks of them).
 */
import type { ShareDecision } from '../../engine.js';
import type { InFlightRecord, RecordState, SharePartitionKey, SharePartitionState } from '../../groups/share/partition-state.js';
import type { Database } from './database.js';

type StoredRecord = [number, RecordState, number, string | null, number];

interface Row {
  group_name: string;
  queue: string;
  partition: number;
  start_offset: string;
  records: StoredRecord[];
}

function toRecords(stored: StoredRecord[]): InFlightRecord[] {
  return stored.map(([offset, state, deliveryCount, owner, deadline]) => ({ offset, state, deliveryCount, owner, deadline }));
}

function fromRecords(records: InFlightRecord[]): string {
  return JSON.stringify(records.map((r): StoredRecord => [r.offset, r.state, r.deliveryCount, r.owner, r.deadline]));
}

export class PostgresShares {
  constructor(private readonly db: Database) {}

  async update<R>(key: SharePartitionKey, decide: (state: SharePartitionState | null, now: number) => ShareDecision<R>): Promise<R> {
    const args = [key.group, key.queue, key.partition];
    return this.db.transaction(async (tx) => {
      const held = await tx.one<{ now: string }>('share-hold', [JSON.stringify(args)]);
      const now = Number(held!.now);
      const row = await tx.one<Row>('share-get', args);
      const decision = decide(row === null ? null : { startOffset: Number(row.start_offset), records: toRecords(row.records) }, now);
      if (decision.state === null) await tx.run('share-delete', args);
      else if (decision.state !== undefined) await tx.run('share-put', [...args, decision.state.startOffset, fromRecords(decision.state.records), now]);
      return decision.answer;
    });
  }

  async list(group: string | null): Promise<(SharePartitionKey & SharePartitionState)[]> {
    const rows = await this.db.statements.run<Row>('share-list', [group]);
    return rows.map((r) => ({ group: r.group_name, queue: r.queue, partition: r.partition, startOffset: Number(r.start_offset), records: toRecords(r.records) }));
  }
}
