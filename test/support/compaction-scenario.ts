/**
 * The compaction scenario the end-to-end test and the benchmark share: many
 * updates over fewer keys, some of them tombstones, written in order to one
 * partition by librdkafka, and what a reader from the start must find once
 * the log is compacted: exactly the latest record of every key (a tombstone
 * where the latest update deleted the key), each at the offset it was
 * written at (update i at offset i: nothing moved, no offset reused), in
 * offset order, then the marker that closed the active tail.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { LibrdKafkaError, Producer as ProducerType } from '@confluentinc/kafka-javascript';
import { expect } from 'vitest';
import { sleep } from './eventually.js';
import { connectProducer, disconnect, readRecords } from './rdkafka.js';
import type { ReadRecord } from './records.js';

const QUEUE_FULL = KafkaJavascript.CODES.ERRORS.ERR__QUEUE_FULL;

export interface Update {
  key: string;
  /** Null: a tombstone. */
  value: string | null;
}

/** Keys `key-<n>`; every `tombstoneEvery`-th update deletes its key. Deterministic (a fixed LCG), so every engine and Kafka get the same log. */
export function planUpdates(count: number, keys: number, tombstoneEvery = 50): Update[] {
  const updates: Update[] = [];
  let state = 0x2545f491;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const key = `key-${state % keys}`;
    updates.push({ key, value: i % tombstoneEvery === tombstoneEvery - 1 ? null : `v${i}-${'x'.repeat(i % 17)}` });
  }
  return updates;
}

/** The marker written last, after the tail's time is up, so everything before it may be compacted. */
export const MARKER: Update = { key: 'marker', value: 'end' };

/** The latest update's index per key: where a reader of the compacted log finds each key. */
export function latestIndexByKey(updates: readonly Update[]): Map<string, number> {
  const latest = new Map<string, number>();
  updates.forEach((u, i) => latest.set(u.key, i));
  return latest;
}

/** Writes the updates in order to partition 0 (idempotent, so update i lands at offset i on an empty topic). */
export async function produceUpdates(bootstrap: string, topic: string, updates: readonly Update[], codec: 'lz4' | 'none' = 'lz4'): Promise<void> {
  const producer: ProducerType = await connectProducer(bootstrap, { 'enable.idempotence': true, 'linger.ms': 20, 'batch.num.messages': 2000, 'compression.codec': codec }, topic);
  const errors: LibrdKafkaError[] = [];
  let reported = 0;
  producer.on('delivery-report', (err) => {
    reported++;
    if (err) errors.push(err);
  });
  try {
    for (const u of updates) {
      for (;;) {
        try {
          producer.produce(topic, 0, u.value === null ? null : Buffer.from(u.value), Buffer.from(u.key));
          break;
        } catch (e) {
          if ((e as { code?: number }).code !== QUEUE_FULL) throw e;
          producer.poll();
          await sleep(5);
        }
      }
    }
    const deadline = Date.now() + 300_000;
    while (reported < updates.length && Date.now() < deadline) await sleep(20);
    expect(errors.map((e) => e.message)).toEqual([]);
    expect(reported).toBe(updates.length);
  } finally {
    await disconnect(producer);
  }
}

/**
 * Reads the partition from the start until the marker arrives among the
 * first `expected` records (the compacted log's size), polling while the
 * compactor is not done yet; fails when it never is.
 */
export async function readCompacted(bootstrap: string, topic: string, expected: number, timeoutMs = 180_000): Promise<ReadRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await readRecords(bootstrap, topic, { partitions: [0], count: expected, timeoutMs: 60_000 });
    // Before the compactor is done, the first `expected` records (a consume may hand over a few more) end before the marker.
    if (read.length === expected && read.at(-1)?.key === MARKER.key) return read;
    if (Date.now() > deadline) throw new Error(`the first ${expected} records of ${topic} still end at offset ${read.at(-1)?.offset}, not at the marker: compaction did not finish`);
    await sleep(500);
  }
}

/** A compacted log read from the start: exactly the latest record of each key, at its own offset, in order, then the marker. */
export function expectLatestPerKey(read: readonly ReadRecord[], updates: readonly Update[]): void {
  const latest = latestIndexByKey(updates);
  const expected = [...latest.entries()]
    .sort((a, b) => a[1] - b[1])
    .map(([key, i]) => ({ offset: i, key, value: updates[i]!.value ?? '' }));
  expected.push({ offset: updates.length, key: MARKER.key, value: MARKER.value! });
  // librdkafka hands a tombstone's null value over as ''; no update's value is ''.
  expect(read.map((r) => ({ offset: r.offset, key: r.key, value: r.value }))).toEqual(expected);
}

/** The surviving live records (no tombstones) as key → value: what two brokers' compacted logs are compared by. */
export function liveSet(read: readonly ReadRecord[]): Map<string, string> {
  return new Map(read.filter((r) => r.value !== '').map((r) => [r.key!, r.value]));
}
