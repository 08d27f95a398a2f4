import type {
  CommitOffsetsRequest,
  CommittedOffset,
  DeleteOffsetsRequest,
  FetchOffsetsRequest,
  FetchOffsetsResult,
  GroupSummary,
} from '../../core.js';
import { offsetColumns } from './offset-columns.js';
import { type PostgresStore } from './store.js';

/** Consumer groups' committed offsets (sql/groups.sql). */
export class PostgresOffsets {
  constructor(private readonly store: PostgresStore) {}

  async commit({ group, offsets: checked, fence }: { group: string; offsets: CommittedOffset[]; fence?: CommitOffsetsRequest['fence'] }): Promise<void> {
    if (checked.length === 0) return;
    const rows = await this.store.findPartitions(checked);
    checked.forEach((o, i) => this.store.requireFound(o, rows[i]!));
    // A fenced commit is checked against its lease in its own transaction (./coordination.ts).
    await this.store.db.transaction(async (tx) => {
      if (fence) await this.store.coordination.checkFence(tx, { kind: 'group', key: group, ...fence });
      await tx.run('commit-offsets', [group, ...offsetColumns(checked)]);
    });
  }

  async fetch(req: FetchOffsetsRequest): Promise<FetchOffsetsResult> {
    const { group, partitions: parts } = req;
    type OffsetRow = { queue_name: string | null; partition_idx: number | null; committed: number | null; leader_epoch: number | null; metadata: string | null };
    if (parts === null) {
      const rows = await this.store.db.statements.run<OffsetRow>('group-offsets-all', [group]);
      return { offsets: rows.map((r) => ({ queue: r.queue_name!, partition: r.partition_idx!, offset: r.committed!, leaderEpoch: r.leader_epoch!, metadata: r.metadata })) };
    }
    if (parts.length === 0) return { offsets: [] };
    const rows = await this.store.db.statements.run<OffsetRow>('group-offsets-some', [group, parts.map((p) => p.queue), parts.map((p) => p.partition)]);
    return {
      offsets: parts.map((p, i) => {
        const r = rows[i]!;
        return r.committed === null
          ? { queue: p.queue, partition: p.partition, offset: -1, leaderEpoch: -1, metadata: null }
          : { queue: p.queue, partition: p.partition, offset: r.committed, leaderEpoch: r.leader_epoch!, metadata: r.metadata };
      }),
    };
  }

  async delete(req: DeleteOffsetsRequest): Promise<void> {
    const { group, partitions: parts } = req;
    if (parts.length === 0) return;
    await this.store.db.statements.run('delete-offsets', [group, parts.map((p) => p.queue), parts.map((p) => p.partition)]);
  }

  async listGroups(): Promise<{ groups: GroupSummary[] }> {
    const rows = await this.store.db.statements.run<{ group_name: string }>('list-groups');
    return { groups: rows.map((r) => ({ group: r.group_name, protocolType: 'consumer' })) };
  }
}
