import { isCoreError } from '../errors.js';
import { GroupCoordinator, type CoordinatorOptions } from '../groups/coordinator.js';
import { ConsumerGroupCoordinator, type ConsumerCoordinatorOptions } from '../groups/consumer/coordinator.js';
import { downgradedConsumerGroup } from '../groups/consumer/downgrade.js';
import { StreamsGroupCoordinator, type StreamsCoordinatorOptions } from '../groups/streams/coordinator.js';
import type { StoredGroup } from '../groups/types.js';
import { GroupStateWriter } from './group-states.js';
import { GroupLeases, type CoordinationStore, type StoredGroupStates } from './leases.js';

/** A group call may proceed under the lease at `epoch`, or is answered with the error (and the owner, when another node holds it). */
export type Held = { epoch: number } | { error: 'not_coordinator' | 'coordinator_not_available'; owner?: string };

/**
 * The group coordinators (classic, and KIP-848 consumer groups) under
 * coordinator leases: the one place that ties the two together, so the core front only asks it. The coordinator knows
 * nothing of leases (it stores through a GroupStore), the leases nothing of
 * groups (they report through two hooks); this class gives each what it
 * needs of the other:
 *
 * - a group call holds the group's lease first, loading the stored group
 *   into the coordinator when the lease is newly this node's;
 * - the coordinator stores a group only under the epoch its lease is held
 *   at, and a store that finds the lease another node's forgets it;
 * - a lease lost (renewal refused, another owner found) drops the group
 *   from the coordinator; renewal keeps the leases of groups with members.
 *
 * On an engine that is not shared (the memory engine) nothing is stored and
 * every lease is this node's (LocalCoordination).
 */
export class LeasedGroups {
  readonly coordinator: GroupCoordinator;
  /** KIP-848 consumer groups, beside the classic ones under the same leases and stored the same way (./group-states.ts). */
  readonly consumerGroups: ConsumerGroupCoordinator;
  /** Kafka Streams groups (KIP-1071), under the same leases and stored the same way (./group-states.ts). */
  readonly streamsGroups: StreamsGroupCoordinator;
  private readonly leases: GroupLeases;
  private readonly classicStates: GroupStateWriter<'classic'>;
  private readonly consumerStates: GroupStateWriter<'consumer'>;
  private readonly streamsStates: GroupStateWriter<'streams'>;

  constructor(
    private readonly coordination: CoordinationStore,
    private readonly shared: boolean,
    options: Partial<CoordinatorOptions>,
    consumerOptions: Partial<ConsumerCoordinatorOptions> = {},
    streamsOptions: Partial<StreamsCoordinatorOptions> = {},
  ) {
    const epochOf = (group: string) => this.leases.epochOf(group);
    this.classicStates = new GroupStateWriter('classic', coordination, epochOf, (group) => this.lost(group));
    this.consumerStates = new GroupStateWriter('consumer', coordination, epochOf, (group) => this.lost(group));
    this.streamsStates = new GroupStateWriter('streams', coordination, epochOf, (group) => this.lost(group));
    const store = shared ? { save: (group: string, stored: StoredGroup) => this.classicStates.save(group, () => stored) } : null;
    this.coordinator = new GroupCoordinator(options, store);
    // A member removed on a timer may have been the last of the consumer protocol: the group may become classic.
    this.consumerGroups = new ConsumerGroupCoordinator(consumerOptions, (group) => void this.downgradeIfClassic(group).then((done) => done || this.saveConsumerGroup(group)));
    // The initial rebalance delay is the classic groups' option (Kafka has one per kind, each 3 s by default).
    const delay = options.initialRebalanceDelayMs === undefined ? {} : { initialRebalanceDelayMs: options.initialRebalanceDelayMs };
    this.streamsGroups = new StreamsGroupCoordinator({ ...delay, ...streamsOptions }, (group) => void this.saveStreamsGroup(group));
    this.leases = new GroupLeases(coordination, {
      active: () => [...this.coordinator.activeGroups(), ...this.consumerGroups.activeGroups(), ...this.streamsGroups.activeGroups()],
      lost: (group) => this.dropGroup(group),
    });
  }

  private dropGroup(group: string): void {
    this.coordinator.drop(group);
    this.consumerGroups.drop(group);
    this.streamsGroups.drop(group);
    this.classicStates.forget(group);
    this.consumerStates.forget(group);
    this.streamsStates.forget(group);
  }

  /**
   * Stores the consumer group as the coordinator holds it now, under its
   * lease, after the stores before it (./group-states.ts). Answers false
   * when it was not stored: when another node holds the group now, the group
   * is dropped here, and its members are told NOT_COORDINATOR.
   */
  saveConsumerGroup(group: string): Promise<boolean> {
    if (!this.shared) return Promise.resolve(true);
    return this.consumerStates.save(group, () => this.consumerGroups.snapshot(group));
  }

  /**
   * Stores the streams group as the coordinator holds it now, under its
   * lease, after the stores before it, as saveConsumerGroup does for a
   * consumer group; false when another node holds the group now.
   */
  saveStreamsGroup(group: string): Promise<boolean> {
    if (!this.shared) return Promise.resolve(true);
    return this.streamsStates.save(group, () => this.streamsGroups.snapshot(group));
  }

  /** The group is no streams group any more (deleted, or another kind took the empty group): its stored state goes. */
  async forgetStreamsGroup(group: string): Promise<void> {
    this.streamsGroups.drop(group);
    this.streamsStates.forget(group);
    if (this.shared) await this.coordination.deleteGroupState('streams', group);
  }

  /** The group is no consumer group any more (an empty one became classic, or was deleted): its stored state goes. */
  async forgetConsumerGroup(group: string): Promise<void> {
    this.consumerGroups.drop(group);
    this.consumerStates.forget(group);
    if (this.shared) await this.coordination.deleteGroupState('consumer', group);
  }

  /**
   * KIP-848's downgrade: a consumer group whose members all speak the
   * classic protocol (the last consumer-protocol member left or was removed)
   * becomes a classic group, rebalancing (./groups/consumer/downgrade.ts).
   * True when it did; its stored consumer state then goes.
   */
  async downgradeIfClassic(group: string): Promise<boolean> {
    const stored = this.consumerGroups.snapshot(group);
    const classic = stored && downgradedConsumerGroup(stored);
    if (!classic) return false;
    await this.consumerStates.settled(group);
    this.coordinator.adoptDowngraded(group, classic);
    await this.forgetConsumerGroup(group);
    return true;
  }

  /**
   * Holds the group's lease before a group call is answered (loading the
   * group when the lease is newly this node's). An id the coordinator will
   * refuse anyway (empty) takes no lease.
   */
  async own(group: string, reachable: readonly string[] | null = null): Promise<Held> {
    if (typeof group !== 'string' || group === '') return { epoch: 0 };
    let hold;
    try {
      hold = await this.leases.hold(group, reachable, () => this.load(group));
    } catch (e) {
      // The store is away: a retriable answer, as Kafka's coordinator gives while it loads a group.
      if (isCoreError(e) && (e.code === 'unavailable' || e.code === 'closed')) return { error: 'coordinator_not_available' };
      throw e;
    }
    return hold.held ? { epoch: hold.epoch } : { error: 'not_coordinator', owner: hold.owner };
  }

  /**
   * Loads a group this node newly holds: a streams group with members, then
   * a consumer group with members, win over a classic group's stored state
   * (a group has one protocol at a time); otherwise the classic one is
   * restored, and an empty streams or consumer group only when there is no
   * classic one.
   */
  private async load(group: string): Promise<void> {
    const kinds = ['classic', 'consumer', 'streams'] as const;
    const [classic, consumer, streams] = await Promise.all(kinds.map((kind) => this.coordination.loadGroupState(kind, group))) as [
      StoredGroupStates['classic'] | null,
      StoredGroupStates['consumer'] | null,
      StoredGroupStates['streams'] | null,
    ];
    if (streams && (streams.members.length > 0 || (!classic && !consumer))) {
      this.streamsGroups.restore(group, streams);
      this.streamsStates.loaded(group, streams);
    } else if (consumer && (consumer.members.length > 0 || !classic)) {
      this.consumerGroups.restore(group, consumer);
      this.consumerStates.loaded(group, consumer);
    } else if (classic) {
      this.coordinator.restore(group, classic);
      this.classicStates.loaded(group, classic);
    }
  }

  /** A write found the group's lease another node's: forget the lease and drop the group, so its members find the owner. */
  lost(group: string): void {
    this.leases.forget(group);
    this.dropGroup(group);
  }

  /** Lets go of a group's lease (the group was deleted): what was written of it is forgotten too. */
  release(group: string): Promise<void> {
    this.classicStates.forget(group);
    this.consumerStates.forget(group);
    this.streamsStates.forget(group);
    return this.leases.release(group);
  }

  close(): void {
    this.leases.close();
    this.coordinator.close();
    this.consumerGroups.close();
    this.streamsGroups.close();
  }
}
