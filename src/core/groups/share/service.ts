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
import { acknowledge, acquire, acquiredRanges, advanceStart, expireLocks, lag, nextFetchOffset, releaseOwner, type FailedSink, type SharePartitionKey, type SharePartitionState } from './partition-state.js';
import { batchSpans } from './spans.js';
import { writeDeadLetters } from './dead-letters.js';
import type {
  ShareAcknowledgement, ShareAcknowledgeResult, ShareFetchPartition, ShareFetchPartitionResult, ShareFetchRequest, ShareFetchResult,
  ShareGroupConfig, ShareGroupDescription, ShareGroupError, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResult, ShareOffsetsPartition,
} from './types.js';

/** Kafka's share.partition.max.record.locks default: most records in flight per share-partition. */
export const MAX_IN_FLIGHT = 2000;
/** How long one wait for new records lasts before locks that ran out are looked at again. */
const WAIT_SLICE_MS = 250;

export class ShareGroups {
  private readonly groups = new Map<string, ShareGroupMembers>();

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

  alterConfig(group: string, changes: Record<string, string | null>, validateOnly: boolean): Promise<{ error: string | null }> {
    return alterShareConfig(this.engine.kv, group, changes, validateOnly);
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
    for (const key of await this.engine.shares.list(group)) {
      const failed: FailedSink = [];
      await this.engine.shares.update(key, (state) => {
        if (state === null || !releaseOwner(state, member, config['share.delivery.count.limit'], failed)) return { answer: undefined };
        advanceStart(state);
        return { state, answer: undefined };
      });
      await writeDeadLetters(this.engine, group, key.queue, key.partition, failed);
    }
  }

  async acknowledge(group: string, memberId: string, acknowledgements: ShareAcknowledgement[]): Promise<ShareAcknowledgeResult> {
    const { config } = await this.config(group);
    const partitions: ShareAcknowledgeResult['partitions'] = [];
    for (const ack of acknowledgements) {
      const failed: FailedSink = [];
      const error = await this.engine.shares.update({ group, queue: ack.queue, partition: ack.partition }, (state, now) => {
        if (state === null) return { answer: 'invalid_record_state' as ShareGroupError };
        const limit = config['share.delivery.count.limit'];
        expireLocks(state, now, limit, failed);
        const lockMs = config['share.record.lock.duration.ms'];
        const applied = ack.batches.map((b) => acknowledge(state, { owner: memberId, ...b, now, lockMs, deliveryLimit: limit, failed }));
        advanceStart(state);
        return { state, answer: applied.every(Boolean) ? null : ('invalid_record_state' as ShareGroupError) };
      });
      await writeDeadLetters(this.engine, group, ack.queue, ack.partition, failed);
      partitions.push({ queue: ack.queue, partition: ack.partition, error });
    }
    return { partitions };
  }

  /** Acknowledges, then acquires; with nothing acquired, waits for records up to maxWaitMs (Kafka's long poll). */
  async fetch(req: ShareFetchRequest, signal?: AbortSignal): Promise<ShareFetchResult> {
    const acknowledged = (await this.acknowledge(req.group, req.memberId, req.acknowledgements)).partitions;
    const { config } = await this.config(req.group);
    const deadline = this.clock() + Math.max(0, req.maxWaitMs);
    for (;;) {
      const partitions: ShareFetchPartitionResult[] = [];
      let room = req.maxRecords;
      for (const p of req.partitions) {
        const result = room > 0 ? await this.fetchPartition(req, p, config, room) : { ...p, error: null, records: [], acquired: [] };
        room -= result.acquired.reduce((n, r) => n + r.lastOffset - r.firstOffset + 1, 0);
        partitions.push(result);
      }
      const remaining = deadline - this.clock();
      if (room < req.maxRecords || remaining <= 0 || req.partitions.length === 0 || signal?.aborted === true) {
        return { lockDurationMs: config['share.record.lock.duration.ms'], acknowledged, partitions };
      }
      await this.waitForRecords(req.partitions, Math.min(remaining, WAIT_SLICE_MS), signal);
    }
  }

  /** Waits until one of the partitions has records past its end now, or for waitMs. */
  private async waitForRecords(partitions: ShareFetchPartition[], waitMs: number, signal?: AbortSignal): Promise<void> {
    const offsets = await this.engine.log.offsets({ partitions });
    const reads = offsets.partitions.filter((o) => o.error === null).map((o) => ({ queue: o.queue, partition: o.partition, fetchOffset: o.highWatermark, maxBytes: 1 }));
    if (reads.length === 0) return;
    await this.engine.log.read({ partitions: reads, minBytes: 1, maxWaitMs: waitMs, maxBytes: 1, isolation: 'read_uncommitted' }, { signal });
  }

  /** Long because it runs the three steps of one partition's acquisition: where to read, the read, and the acquisition under the unit. */
  private async fetchPartition(req: ShareFetchRequest, p: ShareFetchPartition, config: ShareGroupConfig, maxRecords: number): Promise<ShareFetchPartitionResult> {
    const none = (error: ShareGroupError | null): ShareFetchPartitionResult => ({ ...p, error, records: [], acquired: [] });
    const [offsets] = (await this.engine.log.offsets({ partitions: [p] })).partitions;
    if (offsets === undefined || offsets.error !== null) return none('unknown_topic_or_partition');
    const key: SharePartitionKey = { group: req.group, queue: p.queue, partition: p.partition };
    const limit = config['share.delivery.count.limit'];
    const readCommitted = config['share.isolation.level'] === 'read_committed';
    const end = readCommitted ? offsets.lastStableOffset : offsets.highWatermark;
    const failed: FailedSink = [];
    const fetchOffset = await this.engine.shares.update(key, (stored, now) => {
      const state = settle(stored, offsets, config, now, failed);
      return { state, answer: nextFetchOffset(state) };
    });
    await writeDeadLetters(this.engine, req.group, p.queue, p.partition, failed);
    if (fetchOffset >= end) return none(null);
    const read = await this.engine.log.read({
      partitions: [{ queue: p.queue, partition: p.partition, fetchOffset, maxBytes: req.maxBytes }],
      minBytes: 0, maxWaitMs: 0, maxBytes: req.maxBytes, isolation: readCommitted ? 'read_committed' : 'read_uncommitted',
    });
    const got = read.partitions[0];
    if (got === undefined || got.error !== null) return none(null);
    const spans = batchSpans(got.batches, readCommitted ? got.abortedTransactions : null).filter((s) => s.baseOffset < end);
    const failedSince: FailedSink = [];
    const acquired = await this.engine.shares.update(key, (stored, now) => {
      const state = settle(stored, offsets, config, now, failedSince);
      const taken = acquire(state, spans, { owner: req.memberId, now, lockMs: config['share.record.lock.duration.ms'], maxRecords, maxInFlight: MAX_IN_FLIGHT });
      advanceStart(state);
      return { state, answer: acquiredRanges(taken) };
    });
    await writeDeadLetters(this.engine, req.group, p.queue, p.partition, failedSince);
    const records = got.batches.filter((_, i) => acquired.some((r) => r.firstOffset <= spans[i]!.lastOffset && r.lastOffset >= spans[i]!.baseOffset));
    return { ...p, error: null, records, acquired };
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
    for (const p of partitions) {
      await this.engine.shares.update({ group, queue: p.queue, partition: p.partition }, () => ({ state: { startOffset: p.startOffset, records: [] }, answer: undefined }));
    }
    if (!this.groups.has(group)) this.groups.set(group, { groupEpoch: 0, members: new Map() });
  }

  /** Forgets the group's state for these queues (null: all of it). */
  async deleteOffsets(group: string, queues: string[] | null): Promise<void> {
    for (const key of await this.engine.shares.list(group)) {
      if (queues === null || queues.includes(key.queue)) await this.engine.shares.update(key, () => ({ state: null, answer: undefined }));
    }
  }

  /** Forgets every group's state for a deleted queue. */
  async forgetQueue(queue: string): Promise<void> {
    for (const key of await this.engine.shares.list(null)) {
      if (key.queue === queue) await this.engine.shares.update(key, () => ({ state: null, answer: undefined }));
    }
  }

  /** Whether the group has share state in the engine (a group no core holds in memory yet). */
  async hasState(group: string): Promise<boolean> {
    return (await this.engine.shares.list(group)).length > 0;
  }
}

/**
 * A share-partition as a fetch finds it: initialized where share.auto.offset.reset
 * says when new, moved past records the log no longer holds, its ended locks
 * given back, its start offset past what is done.
 */
function settle(stored: SharePartitionState | null, offsets: { logStartOffset: number; highWatermark: number }, config: ShareGroupConfig, now: number, failed: FailedSink = []): SharePartitionState {
  const state = stored ?? { startOffset: config['share.auto.offset.reset'] === 'earliest' ? offsets.logStartOffset : offsets.highWatermark, records: [] };
  if (state.startOffset < offsets.logStartOffset) {
    state.startOffset = offsets.logStartOffset;
    state.records = state.records.filter((r) => r.offset >= offsets.logStartOffset);
  }
  expireLocks(state, now, config['share.delivery.count.limit'], failed);
  advanceStart(state);
  return state;
}
