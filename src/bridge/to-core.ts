/**
 * The bridge's Queen target: the source's batches appended byte for byte at
 * their source offsets with Core.appendAt (validated there as produced
 * batches are), which writes nothing below the partition's next offset
 * (answered already_there, under the partition lock). The target log is the
 * ledger of what was copied: a partition is followed from its next offset on
 * the target, so a kill at any moment loses nothing and writes nothing twice.
 *
 * A marker at the end of a partition is covered by appendAt's endOffset (the
 * source's end past the last batch read), so a consumer position there is
 * valid on the target too.
 *
 * Group offsets are committed as they are (the offsets are the source's),
 * marked with COMMIT_METADATA. A group that has moved is left alone from then
 * on: one with members on the target (the coordinator refuses a commit from
 * outside a group with members), or one whose target offsets were committed
 * by someone other than the bridge.
 */
import type { Logger } from 'pino';
import type { AppendAtPartition, Core } from '../core/core.js';
import { CoreError } from '../core/errors.js';
import { KAFKA_QUEUE_CONFIG, topicConfigFromEntries, TopicConfigError } from '../topic-configs/index.js';
import { COMMIT_METADATA, type BridgeTarget, type GroupCopied, type PartitionWrite, type PartitionWritten, type SourceGroupOffset } from './target.js';

/** Bytes of batches per appendAt call. */
const MAX_CALL_BYTES = 8 * 1024 * 1024;

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

export class CoreTarget implements BridgeTarget {
  readonly takesMarkers = true;
  readonly name = 'the core';

  constructor(
    private readonly core: Core,
    private readonly log: Logger,
  ) {}

  async follow(topic: string, count: number, known: number, sourceConfigs: () => Promise<Record<string, string> | null>): Promise<number[]> {
    const { core, log } = this;
    let info = await core.describeQueue({ name: topic });
    if (!info) {
      const configs = (await sourceConfigs()) ?? {};
      info = await core.createQueue({ name: topic, partitions: count, config: { ...KAFKA_QUEUE_CONFIG, ...this.targetConfig(topic, configs) }, ifNotExists: true });
      log.info({ topic, partitions: count }, `created ${topic} on the target with ${count} partitions`);
    }
    if (info.partitions.length < count) {
      info = await core.addPartitions({ name: topic, totalCount: count });
      log.info({ topic, partitions: count }, `${topic} has ${count} partitions on the source now; added the new ones on the target`);
    }
    const refs = Array.from({ length: count - known }, (_, i) => ({ queue: topic, partition: known + i }));
    const { partitions: offsets } = await core.offsets({ partitions: refs });
    return offsets.map((o) => {
      if (o.error) throw new Error(`The target's partition ${topic}/${o.partition} cannot be read (${o.error}).`);
      return o.highWatermark;
    });
  }

  /**
   * The source's topic configs as the target's queue settings. One the target
   * refuses is left out, saying so; a compacted topic the target cannot
   * compact keeps every record instead (retention off), so nothing the
   * source still holds is deleted on the target by age or size.
   */
  private targetConfig(topic: string, configs: Record<string, string>): ReturnType<typeof topicConfigFromEntries> {
    const accepted: { name: string; value: string }[] = [];
    for (const [name, value] of Object.entries(configs)) {
      try {
        topicConfigFromEntries([{ name, value }]);
        accepted.push({ name, value });
      } catch (e) {
        if (!(e instanceof TopicConfigError)) throw e;
        const keepAll = name === 'cleanup.policy' && value.includes('compact');
        this.log.warn({ topic, config: name, value }, `${topic}: the target does not take ${name}=${value} (${e.message}); ${keepAll ? 'the copy keeps every record instead (no retention by time or size)' : 'the copy uses the target\'s default'}`);
        if (keepAll) accepted.push({ name: 'retention.ms', value: '-1' }, { name: 'retention.bytes', value: '-1' });
      }
    }
    return topicConfigFromEntries(accepted);
  }

  async write(writes: PartitionWrite[]): Promise<PartitionWritten[]> {
    const answers: PartitionWritten[] = [];
    for (const call of this.calls(writes)) {
      const { partitions: results } = await this.core.appendAt({ partitions: call.parts });
      results.forEach((r, i) => {
        const w = call.writes[i]!;
        if (r.error === null) return answers.push({ next: r.nextOffset });
        if (r.error === 'already_there') {
          this.log.warn({ topic: w.topic, partition: w.partition, nextOffset: r.nextOffset }, `records from offset ${w.batches[0]?.baseOffset} of ${w.topic}/${w.partition} are on the target already (another bridge, or a retried write); going on from ${r.nextOffset}`);
          return answers.push({ next: r.nextOffset });
        }
        return answers.push({ refused: r.errorMessage ?? r.error });
      });
    }
    return answers;
  }

  /** The writes as appendAt calls of at most MAX_CALL_BYTES of batches each, in order. */
  private calls(writes: PartitionWrite[]): { writes: PartitionWrite[]; parts: AppendAtPartition[] }[] {
    const calls: { writes: PartitionWrite[]; parts: AppendAtPartition[] }[] = [];
    let call = { writes: [] as PartitionWrite[], parts: [] as AppendAtPartition[] };
    let bytes = 0;
    for (const w of writes) {
      const records = w.batches.length === 1 ? w.batches[0]!.bytes : Buffer.concat(w.batches.map((b) => b.bytes));
      if (bytes > 0 && bytes + records.length > MAX_CALL_BYTES) {
        calls.push(call);
        call = { writes: [], parts: [] };
        bytes = 0;
      }
      call.writes.push(w);
      call.parts.push({ queue: w.topic, partition: w.partition, records, ...(w.endOffset !== null ? { endOffset: w.endOffset } : {}) });
      bytes += records.length;
    }
    if (call.parts.length > 0) calls.push(call);
    return calls;
  }

  /** The core unreachable or full: the same write again later is safe. */
  passing(e: unknown): boolean {
    return !(e instanceof CoreError) || ['unavailable', 'closed', 'storage_full'].includes(e.code);
  }

  async copyGroup(group: string, source: SourceGroupOffset[], copiedTo: (topic: string, partition: number) => number | undefined): Promise<GroupCopied> {
    const target = await this.core.fetchOffsets({ group, partitions: null });
    const foreign = target.offsets.find((o) => o.offset >= 0 && o.metadata !== COMMIT_METADATA);
    if (foreign) return { moved: `it committed offset ${foreign.offset} of ${foreign.queue}/${foreign.partition} on the target itself` };
    const onTarget = new Map(target.offsets.map((o) => [key(o.queue, o.partition), o.offset]));
    const offsets = source
      .filter((s) => s.offset >= 0)
      .filter((s) => {
        const copied = copiedTo(s.topic, s.partition);
        // Copied up to the committed offset, and not committed there already.
        return copied !== undefined && copied >= s.offset && onTarget.get(key(s.topic, s.partition)) !== s.offset;
      })
      .map((s) => ({ queue: s.topic, partition: s.partition, offset: s.offset, leaderEpoch: -1, metadata: COMMIT_METADATA }));
    if (offsets.length === 0) return { commits: 0 };
    const { error } = await this.core.commitGroupOffsets({ group, generationId: -1, memberId: '', groupInstanceId: null, offsets });
    if (error) return { moved: `it has members on the target (the commit was answered ${error})` };
    return { commits: offsets.length };
  }

  async close(): Promise<void> {
    // The core is the caller's: it opened it and closes it.
  }
}
