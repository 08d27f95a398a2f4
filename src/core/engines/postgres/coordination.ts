import { randomUUID } from 'node:crypto';
import { CoreError } from '../../errors.js';
import { leaseName, type CoordinationStore, type GroupStateKind, type LeaseKind, type LeaseTake, type StoredGroupStates } from '../../coordination/leases.js';
import type { Database, Statements } from './database.js';

/**
 * Coordinator leases and stored group membership in PostgreSQL
 * (sql/coordination.sql, migrations 008, 010 and 016). Every core on the database and
 * schema competes for the same rows; a lease changes hands only through
 * `lease-take`, which bumps its epoch, and every coordinator write locks the
 * lease row (FOR SHARE) and compares owner and epoch in the write's own
 * transaction, so a takeover waits for a write in flight and every later
 * write of the old owner is refused.
 */

/** Each kind of group state's statements (sql/coordination.sql): a table per kind, the same four statements. */
const GROUP_STATE_STATEMENTS: Record<GroupStateKind, { store: string; load: string; delete: string; all: string }> = {
  classic: { store: 'group-state-store', load: 'group-state-load', delete: 'group-state-delete', all: 'group-states-all' },
  consumer: { store: 'consumer-group-state-store', load: 'consumer-group-state-load', delete: 'consumer-group-state-delete', all: 'consumer-group-states-all' },
  streams: { store: 'streams-group-state-store', load: 'streams-group-state-load', delete: 'streams-group-state-delete', all: 'streams-group-states-all' },
};

/** A coordinator write's claim: the lease it was decided under. */
export interface LeaseFence {
  kind: LeaseKind;
  key: string;
  owner: string;
  epoch: number;
}

export class PostgresCoordination implements CoordinationStore {
  readonly nodeId: string;

  constructor(
    private readonly db: Database,
    private readonly clock: () => number,
    readonly leaseMs: number,
    nodeId?: string,
  ) {
    // A restarted core is a new node: it takes its predecessor's leases when they run out (or at once, when the gateways say that node is gone).
    this.nodeId = nodeId ?? randomUUID();
  }

  now(): number {
    return this.clock();
  }

  /** Lets go of every lease this node holds (a graceful stop: the other cores take over at once, not when the leases run out). */
  async releaseAll(): Promise<void> {
    await this.db.statements.run('lease-release-all', [this.nodeId]);
  }

  async take(kind: LeaseKind, key: string, reachable: readonly string[] | null): Promise<LeaseTake> {
    return this.takeIn(this.db.statements, kind, key, reachable);
  }

  private async takeIn(tx: Statements, kind: LeaseKind, key: string, reachable: readonly string[] | null): Promise<LeaseTake> {
    const row = await tx.one<{ owner: string; epoch: number; deadline: number }>('lease-take', [kind, key, this.nodeId, this.clock(), this.leaseMs, reachable]);
    if (row) return { held: true, epoch: row.epoch, deadline: row.deadline };
    const current = await tx.one<{ owner: string }>('lease-get', [kind, key]);
    // Released between the two statements: nobody holds it, so the next call takes it.
    return { held: false, owner: current?.owner ?? '' };
  }

  /**
   * Inside a transactional-id call's transaction: takes or keeps the id's
   * lease (its state is all in the database, so whoever holds the lease may
   * serve it), or refuses the call when another live node holds it.
   */
  async holdInTransaction(tx: Statements, kind: LeaseKind, key: string): Promise<void> {
    const taken = await this.takeIn(tx, kind, key, null);
    if (!taken.held) throw notCoordinator(kind, key);
  }

  /** Inside a write's transaction: refuses it unless the lease is still held at the epoch it was decided under. */
  async checkFence(tx: Statements, fence: LeaseFence): Promise<void> {
    const row = await tx.one<{ epoch: number }>('lease-check', [fence.kind, fence.key, fence.owner]);
    if (!row || row.epoch !== fence.epoch) throw notCoordinator(fence.kind, fence.key);
  }

  async renew(leases: { kind: LeaseKind; key: string; epoch: number }[]): Promise<Set<string>> {
    const rows = await this.db.statements.run<{ kind: LeaseKind; key: string }>('lease-renew', [
      this.nodeId,
      this.clock() + this.leaseMs,
      leases.map((l) => l.kind),
      leases.map((l) => l.key),
      leases.map((l) => l.epoch),
    ]);
    return new Set(rows.map((r) => leaseName(r.kind, r.key)));
  }

  async release(kind: LeaseKind, key: string, epoch: number): Promise<void> {
    await this.db.statements.run('lease-release', [kind, key, this.nodeId, epoch]);
  }

  /** Stores a group's state if this node holds the group's lease at `epoch`, fence and write in one transaction; false when it does not. */
  async saveGroupState<K extends GroupStateKind>(kind: K, group: string, epoch: number, stored: StoredGroupStates[K]): Promise<boolean> {
    try {
      await this.db.transaction(async (tx) => {
        await this.checkFence(tx, { kind: 'group', key: group, owner: this.nodeId, epoch });
        await tx.run(GROUP_STATE_STATEMENTS[kind].store, [group, JSON.stringify(stored), this.clock()]);
      });
      return true;
    } catch (e) {
      if (e instanceof CoreError && e.code === 'not_coordinator') return false;
      throw e;
    }
  }

  async loadGroupState<K extends GroupStateKind>(kind: K, group: string): Promise<StoredGroupStates[K] | null> {
    const row = await this.db.statements.one<{ state: StoredGroupStates[K] }>(GROUP_STATE_STATEMENTS[kind].load, [group]);
    return row?.state ?? null;
  }

  async deleteGroupState(kind: GroupStateKind, group: string): Promise<void> {
    await this.db.statements.run(GROUP_STATE_STATEMENTS[kind].delete, [group]);
  }

  async storedGroupStates<K extends GroupStateKind>(kind: K): Promise<{ group: string; stored: StoredGroupStates[K] }[]> {
    const rows = await this.db.statements.run<{ group_name: string; state: StoredGroupStates[K] }>(GROUP_STATE_STATEMENTS[kind].all);
    return rows.map((r) => ({ group: r.group_name, stored: r.state }));
  }
}

function notCoordinator(kind: LeaseKind, key: string): CoreError {
  const what = kind === 'group' ? `group "${key}"` : `transactional id "${key}"`;
  return new CoreError('not_coordinator', `Another core node coordinates ${what} now; find its coordinator again (FindCoordinator) and retry there.`);
}
