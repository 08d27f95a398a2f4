/**
 * The reverse bridge's ledger on Kafka: the topic OFFSET_MAP_TOPIC, one
 * partition, one JSON record per partition written per transaction (the runs
 * of source offsets copied and the Kafka offsets they got), written in the
 * same transaction as the records (to-kafka.ts). Here: the mapping held in
 * memory, read back read_committed at start, turned into the records of a
 * transaction, and used to translate a group's source offsets. Also the
 * batches the reverse bridge sends: the source's as stored, or re-encoded
 * when Kafka would not take them as they are (see kafkaBatches).
 */
import { BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import type { CompressionCodec } from '../../protocol/records/compression.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import type { KafkaClient } from '../kafka-client/client.js';
import { committedBatches, fetchFrom, type RawBatch } from '../kafka-client/fetch.js';
import { recordsOf } from './copy-batches.js';

/** The bridge's topic on Kafka: the offset mapping, written in the same transactions as the records. */
export const OFFSET_MAP_TOPIC = '__queen_bridge_offsets';

/** Source offsets [source, source + count) copied to Kafka offsets [target, target + count). */
export type Run = [source: number, target: number, count: number];

interface PartitionMap {
  runs: Run[];
  /** The source offset below which everything is copied. */
  next: number;
  /** The Kafka offset after the last copied record. */
  targetEnd: number;
}

/** A mapping record's value: what one transaction copied of one partition. */
export interface MapEntry {
  topic: string;
  partition: number;
  runs: Run[];
  next: number;
  targetEnd: number;
}

/** A batch as it goes to Kafka, with the source offsets of its records in order (runs of [first offset, count]). */
export interface KafkaBatch {
  bytes: Buffer;
  sources: [offset: number, count: number][];
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;
const MAP_FETCH_BYTES = 8 * 1024 * 1024;

export class OffsetMap {
  private readonly maps = new Map<string, PartitionMap>();

  get size(): number {
    return this.maps.size;
  }

  has(topic: string, partition: number): boolean {
    return this.maps.has(key(topic, partition));
  }

  /** The source offset below which the partition is copied (0 for one not mapped). */
  next(topic: string, partition: number): number {
    return this.maps.get(key(topic, partition))?.next ?? 0;
  }

  remember(entry: MapEntry): void {
    const k = key(entry.topic, entry.partition);
    const map = this.maps.get(k) ?? { runs: [], next: 0, targetEnd: 0 };
    map.runs.push(...entry.runs);
    map.next = entry.next;
    map.targetEnd = entry.targetEnd;
    this.maps.set(k, map);
  }

  /**
   * The entry of one partition's write from the Kafka offset each batch's
   * first record got; null when those offsets are not contiguous (something
   * other than the bridge writes to the partition).
   */
  entryFor(topic: string, partition: number, next: number, batches: readonly KafkaBatch[], bases: readonly number[]): MapEntry | null {
    const runs: Run[] = [];
    let target = bases[0] ?? 0;
    for (let i = 0; i < batches.length; i++) {
      if (bases[i] !== target) return null;
      for (const [source, count] of batches[i]!.sources) {
        const last = runs.at(-1);
        if (last && source === last[0] + last[2] && target === last[1] + last[2]) last[2] += count;
        else runs.push([source, target, count]);
        target += count;
      }
    }
    return { topic, partition, runs, next, targetEnd: batches.length > 0 ? target : (this.maps.get(key(topic, partition))?.targetEnd ?? 0) };
  }

  /** The Kafka offset a consumer at source offset `offset` goes on from: the first copied record at or after it, else the end of what is copied. */
  translate(topic: string, partition: number, offset: number): number {
    const map = this.maps.get(key(topic, partition));
    if (!map) return 0;
    const { runs } = map;
    // The first run that ends past `offset` (runs ascend in source and Kafka offsets).
    let low = 0;
    let high = runs.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const [s, , n] = runs[mid]!;
      if (s + n <= offset) low = mid + 1;
      else high = mid;
    }
    const run = runs[low];
    if (!run) return map.targetEnd;
    const [s, t] = run;
    return offset <= s ? t : t + (offset - s);
  }

  /** Reads the mapping topic read_committed from its start to its last stable offset. */
  async read(client: KafkaClient): Promise<number> {
    const [end] = await client.listOffsets([{ topic: OFFSET_MAP_TOPIC, partition: 0 }], -1, true);
    let offset = 0;
    let entries = 0;
    const deadline = Date.now() + 600_000;
    while (offset < end!) {
      if (Date.now() > deadline) throw new Error(`Reading the bridge's offset mapping (${OFFSET_MAP_TOPIC}) from Kafka took over 600 s; it stands at ${offset} of ${end}.`);
      const leader = client.leaderOf(OFFSET_MAP_TOPIC, 0)?.leader ?? -1;
      const answer = await fetchFrom(await client.connection(leader), [{ topic: OFFSET_MAP_TOPIC, partition: 0, offset, maxBytes: MAP_FETCH_BYTES }], { maxWaitMs: 500, minBytes: 1, maxBytes: MAP_FETCH_BYTES, readCommitted: true });
      const p = answer.partitions[0];
      if (!p || p.errorCode !== 0) throw new Error(`Reading ${OFFSET_MAP_TOPIC} from Kafka failed: Fetch answered error ${p?.errorCode ?? 'none'}`);
      const view = committedBatches(p.records, p.aborted, offset);
      for (const r of recordsOf(view.batches)) {
        if (r.offset < offset) continue;
        this.remember(JSON.parse(r.value!.toString()) as MapEntry);
        entries++;
      }
      offset = view.next;
    }
    return entries;
  }
}

/** The mapping entries of a transaction as one batch of the mapping topic. */
export function mapBatch(entries: readonly MapEntry[]): Buffer {
  const timestamp = Date.now();
  return buildBatch({ records: entries.map((e) => ({ key: `${e.topic}/${e.partition}`, value: JSON.stringify(e), timestamp })) });
}

/**
 * The source's batches as Kafka takes them from a producer. A batch goes as
 * stored (the producer then stamps its own fields) unless Kafka would refuse
 * or change it: offsets with gaps inside (a compacted log; Kafka wants
 * offset deltas 0..n-1), LogAppendTime (Kafka would restamp it) or a delete
 * horizon; those are re-encoded with `compression`, each record's key,
 * value, headers and time kept.
 */
export function kafkaBatches(batches: readonly RawBatch[], compression: CompressionCodec): KafkaBatch[] {
  return batches.map((raw) => {
    const attributes = raw.bytes.readInt16BE(BatchPos.Attributes);
    const contiguous = raw.bytes.readInt32BE(BatchPos.LastOffsetDelta) + 1 === raw.recordCount;
    if (contiguous && (attributes & (BatchAttr.TimestampLogAppend | BatchAttr.DeleteHorizon)) === 0) return { bytes: raw.bytes, sources: [[raw.baseOffset, raw.recordCount]] };
    const records = recordsOf([raw]);
    const sources: [number, number][] = [];
    for (const r of records) {
      const last = sources.at(-1);
      if (last && last[0] + last[1] === r.offset) last[1]++;
      else sources.push([r.offset, 1]);
    }
    return { bytes: buildBatch({ records: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })), compression }), sources };
  });
}

