/**
 * Share groups (KIP-932) in the core: records of a queue worked by the
 * members of a share group under acquisition locks. The lock is the core's
 * lease on a record, with an owner (the member) and a deadline, stored by the
 * engine with the share-partition's state (./partition-state.ts), so it
 * outlives the gateway that took it: once its deadline passes, any core
 * hands the record to the next fetch, its delivery count raised. ACCEPT is
 * the ack; RELEASE hands the record back; REJECT, and a record whose
 * deliveries reached share.delivery.count.limit, are archived (docs/share-groups.md
 * says where they go). Membership is ./members.ts; configs ./config.ts.
 */
import type { Engine } from '../../engine.js';
import type { PartitionRef } from '../../core.js';
import type { TopicMetadata } from '../consumer/types.js';
import { alterShareConfig, readShareConfig } from './config.js';
import { describe, expireMembers, heartbeat, type ShareGroupMembers } from './members.js';
import { advanceStart, lag, releaseOwner, type SharePartitionKey } from './partition-state.js';
import { changeShares } from './change.js';
import { applyAcknowledgements, fetchStep, ReadSizer } from './fetch-step.js';
import type {
  ShareAcknowledgement, ShareAcknowledgeResult, ShareFetchPartition, ShareFetchRequest, ShareFetchResult,
  ShareGroupConfig, ShareGroupDescription, ShareGroupError, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResult, ShareOffsetsPartition,
} from './types.js';
/** How long one wait for new records lasts before locks that ran out are looked at again. */
const WAIT_SLICE_MS = 250;
/**
 * How long a fetch or acknowledgement uses a group's configs read before
 * (a change made through this core is seen at once; one made through
 * another core sharing the database within this long).
 */
const CONFIG_REUSE_MS = 1000;

export class ShareGroups {
  private readonly groups = new Map<string, ShareGroupMembers>();
  private readonly sizer = new ReadSizer();
  private readonly configs = new Map<string, { config: ShareGroupConfig; readAt: number }>();

  constructor(
    private readonly engine: Engine,
    private readonly topics: () => Promise<TopicMetadata[]>,
    private readonly clock: () => number = Date.now,
  ) {}

  isShareGroup(group: string): boolean {
    return this.groups.has(group);
  }

  hasMembers(group: string): boolean {
    return (this.groups.get(group)?.members.size ?? 0) > 0;
  }

  list(): { group: string; state: 'Empty' | 'Stable' }[] {
    return [...this.groups].map(([group, g]) => ({ group, state: g.members.size === 0 ? ('Empty' as const) : ('Stable' as const) }));
  }

  /** The groups held here, and the groups with stored share state no core holds now (Empty), as ListGroups lists them. */
  async listWithStored(): Promise<{ group: string; state: 'Empty' | 'Stable' }[]> {
    const held = this.list();
    const names = new Set(held.map((g) => g.group));
    for (const { group } of await this.engine.shares.list(null)) {
      if (!names.has(group)) held.push({ group, state: 'Empty' });
      names.add(group);
    }
    return held;
  }

  drop(group: string): void {
    this.groups.delete(group);
  }

  config(group: string): Promise<{ config: ShareGroupConfig; set: (keyof ShareGroupConfig)[] }> {
    return readShareConfig(this.engine.kv, group);
  }

  async alterConfig(group: string, changes: Record<string, string | null>, validateOnly: boolean): Promise<{ error: string | null }> {
    this.configs.delete(group);
    const altered = await alterShareConfig(this.engine.kv, group, changes, validateOnly);
    this.configs.delete(group);
    return altered;
  }

  /** The group's configs for the hot path (fetch, acknowledge): read again once CONFIG_REUSE_MS have passed. */
  private async recentConfig(group: string): Promise<ShareGroupConfig> {
    const now = Date.now();
    const held = this.configs.get(group);
    if (held !== undefined && now - held.readAt < CONFIG_REUSE_MS) return held.config;
    const { config } = await this.config(group);
    if (this.configs.size > 10_000) this.configs.clear();
    this.configs.set(group, { config, readAt: now });
    return config;
  }

  async heartbeat(req: ShareGroupHeartbeatRequest): Promise<ShareGroupHeartbeatResult> {
    const { config } = await this.config(req.group);
    const group = this.groups.get(req.group) ?? { groupEpoch: 0, members: new Map() };
    this.groups.set(req.group, group);
    const now = this.clock();
    const gone = expireMembers(group, now, config['share.session.timeout.ms']);
    const outcome = heartbeat(group, req, await this.topics(), now, config['share.heartbeat.interval.ms']);
    if (outcome.left !== null) gone.push(outcome.left);
    for (const member of gone) await this.releaseMember(req.group, member, config);
    return outcome.result;
  }

  async describe(group: string): Promise<ShareGroupDescription> {
    const members = this.groups.get(group);
    if (members !== undefined) {
      const { config } = await this.config(group);
      for (const member of expireMembers(members, this.clock(), config['share.session.timeout.ms'])) await this.releaseMember(group, member, config);
    }
    return describe(group, members, await this.topics());
  }

  /** A member gone: the records it holds go back to the group at once, as Kafka releases them. */
  private async releaseMember(group: string, member: string, config: ShareGroupConfig): Promise<void> {
    const keys: SharePartitionKey[] = (await this.engine.shares.list(group)).map(({ queue, partition }) => ({ group, queue, partition }));
    await changeShares(this.engine, group, keys, (_, state, __, failed) => {
      if (state === null || !releaseOwner(state, member, config['share.delivery.count.limit'], failed)) return { answer: undefined };
      advanceStart(state);
      return { state, answer: undefined };
    });
  }

  async acknowledge(group: string, memberId: string, acknowledgements: ShareAcknowledgement[]): Promise<ShareAcknowledgeResult> {
    const config = await this.recentConfig(group);
    const keys = acknowledgements.map((a) => ({ group, queue: a.queue, partition: a.partition }));
    const errors = await changeShares(this.engine, group, keys, (i, state, now, failed) => {
      if (state === null) return { answer: 'invalid_record_state' as ShareGroupError };
      const applied = applyAcknowledgements(state, memberId, acknowledgements[i]!.batches, config, now, failed);
      return { state, answer: applied ? null : ('invalid_record_state' as ShareGroupError) };
    });
    return { partitions: acknowledgements.map((a, i) => ({ queue: a.queue, partition: a.partition, error: errors[i]! })) };
  }

  /** Acknowledges and acquires in one step (./fetch-step.ts); with nothing acquired, waits for records up to maxWaitMs (Kafka's long poll). */
  async fetch(req: ShareFetchRequest, signal?: AbortSignal): Promise<ShareFetchResult> {
    const config = await this.recentConfig(req.group);
    const deadline = this.clock() + Math.max(0, req.maxWaitMs);
    const first = await fetchStep(this.engine, req, config, req.acknowledgements, this.sizer);
    let step = first;
    for (;;) {
      const remaining = deadline - this.clock();
      if (step.acquiredCount > 0 || remaining <= 0 || req.partitions.length === 0 || signal?.aborted === true) {
        return { lockDurationMs: config['share.record.lock.duration.ms'], acknowledged: first.acknowledged, partitions: step.partitions };
      }
      await this.waitForRecords(req.partitions, Math.min(remaining, WAIT_SLICE_MS), signal);
      step = await fetchStep(this.engine, req, config, [], this.sizer);
    }
  }

  /** Waits until one of the partitions has records past its end now, or for waitMs. */
  private async waitForRecords(partitions: ShareFetchPartition[], waitMs: number, signal?: AbortSignal): Promise<void> {
    const offsets = await this.engine.log.offsets({ partitions });
    const reads = offsets.partitions.filter((o) => o.error === null).map((o) => ({ queue: o.queue, partition: o.partition, fetchOffset: o.highWatermark, maxBytes: 1 }));
    if (reads.length === 0) return;
    await this.engine.log.read({ partitions: reads, minBytes: 1, maxWaitMs: waitMs, maxBytes: 1, isolation: 'read_uncommitted' }, { signal });
  }

  async describeOffsets(group: string, partitions: PartitionRef[] | null): Promise<ShareOffsetsPartition[]> {
    const states = await this.engine.shares.list(group);
    const asked = partitions ?? states.map(({ queue, partition }) => ({ queue, partition }));
    const offsets = asked.length === 0 ? [] : (await this.engine.log.offsets({ partitions: asked })).partitions;
    return asked.map((ref, i) => {
      const state = states.find((s) => s.queue === ref.queue && s.partition === ref.partition);
      const o = offsets[i];
      if (state === undefined) return { ...ref, startOffset: -1, lag: -1, error: o?.error === null ? null : 'unknown_topic_or_partition' };
      return { ...ref, startOffset: state.startOffset, lag: o?.error === null ? lag(state, o.highWatermark) : -1, error: null };
    });
  }

  /** Sets start offsets (records in flight are forgotten); the caller checked the group has no members. */
  async alterOffsets(group: string, partitions: { queue: string; partition: number; startOffset: number }[]): Promise<void> {
    const keys = partitions.map((p) => ({ group, queue: p.queue, partition: p.partition }));
    await changeShares(this.engine, group, keys, (i) => ({ state: { startOffset: partitions[i]!.startOffset, records: [] }, answer: undefined }));
    if (!this.groups.has(group)) this.groups.set(group, { groupEpoch: 0, members: new Map() });
  }

  /** Forgets the group's state for these queues (null: all of it). */
  async deleteOffsets(group: string, queues: string[] | null): Promise<void> {
    const keys = (await this.engine.shares.list(group)).filter((k) => queues === null || queues.includes(k.queue)).map(({ queue, partition }) => ({ group, queue, partition }));
    await changeShares(this.engine, group, keys, () => ({ state: null, answer: undefined }));
  }

  /** Forgets every group's state for a deleted queue. */
  async forgetQueue(queue: string): Promise<void> {
    const keys = (await this.engine.shares.list(null)).filter((k) => k.queue === queue).map(({ group, partition }) => ({ group, queue, partition }));
    for (const group of new Set(keys.map((k) => k.group))) await changeShares(this.engine, group, keys.filter((k) => k.group === group), () => ({ state: null, answer: undefined }));
  }

  /** Whether the group has share state in the engine (a group no core holds in memory yet). */
  async hasState(group: string): Promise<boolean> {
    return (await this.engine.shares.list(group)).length > 0;
  }
}
