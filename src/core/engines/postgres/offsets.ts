import type {
  CommitOffsetsRequest,
  CommittedOffset,
  DeleteOffsetsRequest,
  FetchOffsetsRequest,
  FetchOffsetsResult,
  GroupSummary,
} from '../../core.js';
import { CoreError } from '../../errors.js';
import { requireArray, requireCommittedOffset, requireInteger } from '../../rules/arguments.js';
import { requirePartitionRefs } from '../../rules/requests.js';
import { validateGroupName, validateQueueName } from '../../rules/names.js';
import { type PostgresStore } from './store.js';

/** Consumer groups' committed offsets (sql/groups.sql). */
export class PostgresOffsets {
  constructor(private readonly store: PostgresStore) {}

  async commit(req: CommitOffsetsRequest): Promise<void> {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    const offsets = requireArray<CommittedOffset>(req.offsets, 'offsets');
    // Everything is checked before anything is written.
    const checked = offsets.map((o, i) => {
      validateQueueName(o?.queue);
      requireInteger(o.partition, `offsets[${i}].partition`);
      requireCommittedOffset(o.offset, `offsets[${i}].offset`);
      const leaderEpoch = o.leaderEpoch === undefined ? -1 : requireInteger(o.leaderEpoch, `offsets[${i}].leaderEpoch`, -1);
      if (o.metadata !== null && o.metadata !== undefined && typeof o.metadata !== 'string') {
        throw new CoreError('invalid_argument', `offsets[${i}].metadata must be a string or null.`);
      }
      return { queue: o.queue, partition: o.partition, offset: o.offset, leaderEpoch, metadata: o.metadata ?? null };
    });
    if (checked.length === 0) return;
    const rows = await this.store.findPartitions(checked);
    checked.forEach((o, i) => this.store.requireFound(o, rows[i]!));
    await this.store.db.statements.run('commit-offsets', [
      group,
      checked.map((o) => o.queue),
      checked.map((o) => o.partition),
      checked.map((o) => o.offset),
      checked.map((o) => o.leaderEpoch),
      checked.map((o) => o.metadata),
    ]);
  }

  async fetch(req: FetchOffsetsRequest): Promise<FetchOffsetsResult> {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    type OffsetRow = { queue_name: string | null; partition_idx: number | null; committed: number | null; leader_epoch: number | null; metadata: string | null };
    if (req.partitions === null || req.partitions === undefined) {
      const rows = await this.store.db.statements.run<OffsetRow>('group-offsets-all', [group]);
      return { offsets: rows.map((r) => ({ queue: r.queue_name!, partition: r.partition_idx!, offset: r.committed!, leaderEpoch: r.leader_epoch!, metadata: r.metadata })) };
    }
    const parts = requirePartitionRefs(req.partitions);
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
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    const parts = requirePartitionRefs(req.partitions);
    if (parts.length === 0) return;
    await this.store.db.statements.run('delete-offsets', [group, parts.map((p) => p.queue), parts.map((p) => p.partition)]);
  }

  async listGroups(): Promise<{ groups: GroupSummary[] }> {
    this.store.checkOpen();
    const rows = await this.store.db.statements.run<{ group_name: string }>('list-groups');
    return { groups: rows.map((r) => ({ group: r.group_name, protocolType: 'consumer' })) };
  }
}
