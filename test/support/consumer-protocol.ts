/**
 * The consumer protocol's bytes that ride inside JoinGroup and SyncGroup
 * (ConsumerProtocolSubscription and ConsumerProtocolAssignment, v0), for
 * tests that play a member by hand.
 */
import { Reader } from '../../protocol/primitives/reader.js';
import { Writer } from '../../protocol/primitives/writer.js';

/** ConsumerProtocolSubscription v0: what a consumer puts in JoinGroup's protocol metadata. */
export function subscription(...topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  w.int32(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(null);
  return w.toBuffer();
}

/** ConsumerProtocolAssignment v0 of one topic's partitions: what a leader hands each member in SyncGroup. */
export function assignment(topic: string, partitions: number[]): Buffer {
  const w = new Writer();
  w.int16(0);
  w.int32(1);
  w.string(topic);
  w.int32(partitions.length);
  for (const p of partitions) w.int32(p);
  w.nullableBytes(null);
  return w.toBuffer();
}

/** An assignment read back: its version and each topic's partitions in order; null and empty kept apart. */
export function decodeAssignment(bytes: Buffer | null): { version: number; partitions: Record<string, number[]> } | null | '<empty>' {
  if (bytes === null || bytes.length === 0) return bytes === null ? null : '<empty>';
  const r = new Reader(bytes);
  const version = r.int16();
  const partitions: Record<string, number[]> = {};
  for (let t = r.int32(); t > 0; t--) {
    const topic = r.string()!;
    const parts: number[] = [];
    for (let p = r.int32(); p > 0; p--) parts.push(r.int32());
    partitions[topic] = parts.sort((a, b) => a - b);
  }
  return { version, partitions };
}
