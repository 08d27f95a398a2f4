import type { StoredConsumerGroup } from '../groups/consumer/persistence.js';
import type { StoredStreamsGroup } from '../groups/streams/persistence.js';
import type { StoredGroup } from '../groups/types.js';

/**
 * Coordinator leases: each consumer group and each transactional id is
 * coordinated by one core node at a time, the holder of its lease (owner,
 * epoch, deadline). The holder renews its deadline while it uses the lease;
 * when the holder dies the deadline passes and the next node asked takes the
 * lease at the next epoch. Writes a coordinator makes (offset commits, the
 * group's stored membership, transaction state) are checked against owner
 * and epoch in their own database transaction, so an owner that lost its
 * lease (a process stopped past its deadline) cannot write over its
 * successor: it is told `not_coordinator`, and so are its clients.
 *
 * The memory engine is one node: its leases are its own (LocalCoordination).
 */

export type LeaseKind = 'group' | 'transaction';

/** What taking a lease found: held by this node (at `epoch`), or by `owner`. */
export type LeaseTake = { held: true; epoch: number; deadline: number } | { held: false; owner: string };

/**
 * The group states a coordination store keeps, by kind: a classic group's
 * membership (../groups/persistence.ts), a KIP-848 consumer group's state
 * (../groups/consumer/persistence.ts) and a streams group's (../groups/streams/persistence.ts). What is stored, when, and what a
 * refused store means are decided in the core (./leased-groups.ts); the
 * store only writes a kind's row under the lease, reads it and lists them.
 */
export interface StoredGroupStates {
  classic: StoredGroup;
  consumer: StoredConsumerGroup;
  streams: StoredStreamsGroup;
}

export type GroupStateKind = keyof StoredGroupStates;

/** The engine's side of coordination: the leases and the stored group states. */
export interface CoordinationStore {
  /** This core node's id, unique per process start. */
  readonly nodeId: string;
  /** How long a lease lasts past its last renewal. */
  readonly leaseMs: number;
  /** The clock deadlines are written in. */
  now(): number;
  /**
   * Takes the lease, or keeps it when this node holds it. `reachable`, when
   * known, names the core nodes that clients can reach (those with a live
   * gateway): a lease held by any other node is taken over at once.
   */
  take(kind: LeaseKind, key: string, reachable: readonly string[] | null): Promise<LeaseTake>;
  /** Moves on the deadlines of the leases held at these epochs; answers the "kind\0key"s still held. */
  renew(leases: { kind: LeaseKind; key: string; epoch: number }[]): Promise<Set<string>>;
  release(kind: LeaseKind, key: string, epoch: number): Promise<void>;
  /** Stores a group's state of this kind if this node still holds the group's lease at `epoch` (checked in the write's own transaction); false when it does not. */
  saveGroupState<K extends GroupStateKind>(kind: K, group: string, epoch: number, stored: StoredGroupStates[K]): Promise<boolean>;
  loadGroupState<K extends GroupStateKind>(kind: K, group: string): Promise<StoredGroupStates[K] | null>;
  deleteGroupState(kind: GroupStateKind, group: string): Promise<void>;
  /** Every stored group state of this kind (for listings of groups other nodes coordinate). */
  storedGroupStates<K extends GroupStateKind>(kind: K): Promise<{ group: string; stored: StoredGroupStates[K] }[]>;
}

/** One node alone: every lease is its own, and membership lives in its coordinator. */
export class LocalCoordination implements CoordinationStore {
  readonly nodeId = 'local';
  readonly leaseMs = Number.MAX_SAFE_INTEGER;
  now(): number {
    return Date.now();
  }
  async take(): Promise<LeaseTake> {
    return { held: true, epoch: 1, deadline: Number.MAX_SAFE_INTEGER };
  }
  async renew(leases: { kind: LeaseKind; key: string }[]): Promise<Set<string>> {
    return new Set(leases.map((l) => leaseName(l.kind, l.key)));
  }
  async release(): Promise<void> {}
  async saveGroupState(): Promise<boolean> {
    return true;
  }
  async loadGroupState(): Promise<null> {
    return null;
  }
  async deleteGroupState(): Promise<void> {}
  async storedGroupStates(): Promise<[]> {
    return [];
  }
}

export function leaseName(kind: LeaseKind, key: string): string {
  return `${kind}\u0000${key}`;
}

interface HeldLease {
  kind: LeaseKind;
  key: string;
  epoch: number;
  deadline: number;
  /** When a call last needed it: a lease without members is kept while in use. */
  usedAt: number;
}

/** Taking a group's lease: held (fresh when this node just took it, or took it back), or another node's. */
export type GroupHold = { held: true; epoch: number; fresh: boolean } | { held: false; owner: string };

/**
 * The group leases this node holds, as it believes them: a call on a group
 * whose lease is believed held (deadline not yet near) costs no database
 * round trip; otherwise the lease is taken (or found to be another node's)
 * in the database. A timer renews the leases of groups with members and
 * releases the others. A lease found lost (renewal refused, or a take that
 * finds another owner or a new epoch) is reported through `lost`, and the
 * group is dropped from memory.
 */
export class GroupLeases {
  private readonly held = new Map<string, HeldLease>();
  /** One take per group at a time: a second caller waits for the first's outcome. */
  private readonly taking = new Map<string, Promise<GroupHold>>();
  private readonly timer: NodeJS.Timeout | null = null;
  private renewing = false;

  private readonly clock: () => number;

  constructor(
    private readonly store: CoordinationStore,
    private readonly hooks: {
      /** Groups worth keeping (with members). */
      active(): string[];
      /** The lease was lost, or taken afresh: whatever memory holds of the group is stale. */
      lost(group: string): void;
    },
  ) {
    this.clock = () => store.now();
    if (store.leaseMs < Number.MAX_SAFE_INTEGER) {
      this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(store.leaseMs / 3)));
      this.timer.unref();
    }
  }

  get nodeId(): string {
    return this.store.nodeId;
  }

  /** The epoch this node holds the group's lease at, while it believes it holds it. */
  epochOf(group: string): number | null {
    return this.held.get(group)?.epoch ?? null;
  }

  /**
   * Holds the group's lease before a call on the group is answered. A take
   * that finds the lease newly this node's (`fresh`) runs `load` before any
   * other caller on the group proceeds.
   */
  hold(group: string, reachable: readonly string[] | null, load: () => Promise<void>): Promise<GroupHold> {
    const known = this.held.get(group);
    // A margin of a fifth of the lease: a node that was stopped or slow checks with the database.
    if (known && this.clock() < known.deadline - this.store.leaseMs / 5 && reachable === null) {
      known.usedAt = this.clock();
      return Promise.resolve({ held: true, epoch: known.epoch, fresh: false });
    }
    const running = this.taking.get(group);
    if (running) return running;
    const take = (async (): Promise<GroupHold> => {
      const taken = await this.store.take('group', group, reachable);
      const before = this.held.get(group);
      if (!taken.held) {
        if (before) {
          this.held.delete(group);
          this.hooks.lost(group);
        }
        return { held: false, owner: taken.owner };
      }
      const fresh = before?.epoch !== taken.epoch;
      this.held.set(group, { kind: 'group', key: group, epoch: taken.epoch, deadline: taken.deadline, usedAt: this.clock() });
      if (fresh) {
        this.hooks.lost(group);
        try {
          await load();
        } catch (e) {
          // Not loaded is not held: the next call takes and loads again.
          this.held.delete(group);
          throw e;
        }
      }
      return { held: true, epoch: taken.epoch, fresh };
    })().finally(() => this.taking.delete(group));
    this.taking.set(group, take);
    return take;
  }

  /** Forgets a lease a write found lost (another node took it); nothing to release. */
  forget(group: string): void {
    this.held.delete(group);
  }

  /** Lets go of a group's lease (the group was deleted, or has no members left). */
  async release(group: string): Promise<void> {
    const known = this.held.get(group);
    if (!known) return;
    this.held.delete(group);
    await this.store.release('group', group, known.epoch);
  }

  /** Renews the leases of groups with members, releases the rest; drops what was lost. */
  async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const active = new Set(this.hooks.active());
      const keep: HeldLease[] = [];
      const idleSince = this.clock() - this.store.leaseMs;
      for (const lease of [...this.held.values()]) {
        if (active.has(lease.key) || lease.usedAt > idleSince) keep.push(lease);
        else if (!this.taking.has(lease.key)) {
          this.held.delete(lease.key);
          this.hooks.lost(lease.key);
          await this.store.release('group', lease.key, lease.epoch).catch(() => {});
        }
      }
      if (keep.length === 0) return;
      const now = this.clock();
      const still = await this.store.renew(keep);
      for (const lease of keep) {
        if (this.held.get(lease.key) !== lease) continue;
        if (still.has(leaseName('group', lease.key))) lease.deadline = now + this.store.leaseMs;
        else {
          this.held.delete(lease.key);
          this.hooks.lost(lease.key);
        }
      }
    } catch {
      // The store did not answer: the leases run out unless a later round reaches it.
    } finally {
      this.renewing = false;
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
