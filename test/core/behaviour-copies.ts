import { describe, expect, it } from 'vitest';
import { buildBatch, buildControlBatch, ControlRecordType, decodeBatch } from '../../protocol/records/record-batch.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, type Core } from '../../src/core/core.js';

/**
 * appendAt, the core's append at given offsets (the migration bridge), as part
 * of the behaviour suite (./behaviour.ts): on every engine and through the RPC.
 * What a user of the bridge would notice: records land at their source
 * offsets with the gaps kept, every reader (Fetch's read, ListOffsets, native
 * pop) walks across the gaps, and a repeat writes nothing.
 */

const T0 = 1_700_000_000_000;

/** A copied batch: records at the given absolute offsets (rising, gaps allowed), as a compacted log holds them. */
export function copiedBatch(offsets: number[], options: { compression?: CompressionCodec; label?: string; producer?: { producerId: number; producerEpoch: number; baseSequence: number } } = {}): Buffer {
  const base = offsets[0]!;
  return buildBatch({
    baseOffset: base,
    ...(options.producer ?? {}),
    compression: options.compression ?? CompressionCodec.None,
    records: offsets.map((offset) => ({
      offsetDelta: offset - base,
      key: `k${offset}`,
      value: `${options.label ?? 'v'}${offset}`,
      headers: [{ key: 'at', value: String(offset) }],
      timestamp: T0 + offset,
    })),
  });
}

interface Fixture {
  core(): Core;
  newQueue(partitions?: number): Promise<string>;
  /** Closes and reopens the core on the same storage; null when the engine keeps nothing. */
  reopen(): Promise<Core> | null;
}

async function readOffsets(core: Core, queue: string, fetchOffset = 0): Promise<{ offset: number; value: string; timestamp: number }[]> {
  const out: { offset: number; value: string; timestamp: number }[] = [];
  let at = fetchOffset;
  for (;;) {
    const res = await core.read({ partitions: [{ queue, partition: 0, fetchOffset: at, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
    expect(res.partitions[0]!.error).toBeNull();
    const batches = res.partitions[0]!.batches.map((b) => decodeBatch(b));
    if (batches.length === 0) return out;
    for (const d of batches) {
      const base = Number(d.header.baseOffset);
      for (const r of d.records) if (base + r.offsetDelta >= at) out.push({ offset: base + r.offsetDelta, value: r.value!.toString(), timestamp: Number(d.header.baseTimestamp) + r.timestampDelta });
    }
    // As a Kafka consumer does: on past the last batch's range, records or not (an empty batch spans a trailing gap).
    const last = batches.at(-1)!;
    at = Number(last.header.baseOffset) + last.header.lastOffsetDelta + 1;
  }
}

export function describeCopies(fx: Fixture): void {
  describe('appendAt: copies at given offsets', () => {
    it('stores batches at the offsets they carry, gaps kept, and every reader walks across the gaps', async () => {
      const core = fx.core();
      const q = await fx.newQueue();
      const records = Buffer.concat([copiedBatch([0, 1, 4, 5]), copiedBatch([9, 12], { compression: CompressionCodec.Gzip }), copiedBatch([13])]);
      const res = await core.appendAt({ partitions: [{ queue: q, partition: 0, records }] });
      expect(res.partitions[0]).toMatchObject({ error: null, nextOffset: 14 });
      expect((await readOffsets(core, q)).map((r) => r.offset)).toEqual([0, 1, 4, 5, 9, 12, 13]);
      // A fetch position inside a gap gets the records after it.
      expect((await readOffsets(core, q, 6)).map((r) => r.value)).toEqual(['v9', 'v12', 'v13']);
      expect((await core.offsets({ partitions: [{ queue: q, partition: 0 }] })).partitions[0]).toMatchObject({ highWatermark: 14, logStartOffset: 0 });
      expect(await core.offsetForTimestamp({ queue: q, partition: 0, timestamp: T0 + 6, isolation: 'read_uncommitted' })).toMatchObject({ offset: 9, timestamp: T0 + 9 });
      expect(await core.offsetForTimestamp({ queue: q, partition: 0, timestamp: LATEST_TIMESTAMP, isolation: 'read_uncommitted' })).toMatchObject({ offset: 14 });
      expect(await core.offsetForTimestamp({ queue: q, partition: 0, timestamp: EARLIEST_TIMESTAMP, isolation: 'read_uncommitted' })).toMatchObject({ offset: 0 });
      const popped = await core.pop({ queue: q, consumerGroup: 'native', owner: 'w', batch: 100, waitMs: 0 });
      expect(popped.messages.map((m) => [m.offset, m.key?.toString(), m.timestamp])).toEqual([0, 1, 4, 5, 9, 12, 13].map((o) => [o, `k${o}`, T0 + o]));
      expect(popped.messages[2]!.headers).toEqual([{ key: 'at', value: Buffer.from('4') }]);
      await core.ack({ queue: q, partition: '0', consumerGroup: 'native', offset: 13, status: 'completed', leaseId: popped.lease!.id });
      expect((await core.pop({ queue: q, consumerGroup: 'native', owner: 'w', batch: 100, waitMs: 0 })).messages).toEqual([]);
    });

    it('answers already_there and writes nothing when the first offset is below the partition\'s next offset, whole or overlapping', async () => {
      const core = fx.core();
      const q = await fx.newQueue();
      const first = { queue: q, partition: 0, records: copiedBatch([0, 2, 3]) };
      expect((await core.appendAt({ partitions: [first] })).partitions[0]).toMatchObject({ error: null, nextOffset: 4 });
      const repeat = (await core.appendAt({ partitions: [first] })).partitions[0]!;
      expect(repeat).toMatchObject({ error: 'already_there', nextOffset: 4 });
      expect(repeat.errorMessage).toMatch(/Continue from offset 4/);
      const overlapping = await core.appendAt({ partitions: [{ queue: q, partition: 0, records: copiedBatch([3, 4, 5], { label: 'other' }) }] });
      expect(overlapping.partitions[0]).toMatchObject({ error: 'already_there', nextOffset: 4 });
      expect((await readOffsets(core, q)).map((r) => r.value)).toEqual(['v0', 'v2', 'v3']);
      // The next offset on is accepted, after a gap too.
      expect((await core.appendAt({ partitions: [{ queue: q, partition: 0, records: copiedBatch([7]) }] })).partitions[0]).toMatchObject({ error: null, nextOffset: 8 });
    });

    it('moves the next offset to endOffset past a trailing gap; a producer then appends after it', async () => {
      const core = fx.core();
      const q = await fx.newQueue();
      await core.appendAt({ partitions: [{ queue: q, partition: 0, records: copiedBatch([0, 1]), endOffset: 3 }] });
      expect((await core.offsets({ partitions: [{ queue: q, partition: 0 }] })).partitions[0]!.highWatermark).toBe(3);
      const advanced = await core.appendAt({ partitions: [{ queue: q, partition: 0, records: Buffer.alloc(0), endOffset: 6 }] });
      expect(advanced.partitions[0]).toMatchObject({ error: null, nextOffset: 6 });
      // An endOffset at or below the next offset changes nothing and is no error.
      expect((await core.appendAt({ partitions: [{ queue: q, partition: 0, records: Buffer.alloc(0), endOffset: 2 }] })).partitions[0]).toMatchObject({ error: null, nextOffset: 6 });
      const produced = await core.append({ partitions: [{ queue: q, partition: 0, records: buildBatch({ records: [{ value: 'after' }] }) }] });
      expect(produced.partitions[0]).toMatchObject({ error: null, baseOffset: 6 });
      expect((await readOffsets(core, q)).map((r) => [r.offset, r.value])).toEqual([[0, 'v0'], [1, 'v1'], [6, 'after']]);
      // A reader positioned in the gap (a consumer whose committed offset was the source's end) gets an empty
      // batch spanning the gap, moves past it, and reads on.
      const inGap = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 4, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
      const gap = decodeBatch(inGap.partitions[0]!.batches[0]!);
      expect([Number(gap.header.baseOffset), gap.header.lastOffsetDelta, gap.records.length]).toEqual([3, 2, 0]);
      expect((await readOffsets(core, q, 4)).map((r) => r.offset)).toEqual([6]);
    });

    it('refuses control batches that are not transaction markers of a producer, overlapping batches and unknown partitions, writing nothing', async () => {
      const core = fx.core();
      const q = await fx.newQueue();
      const stray = buildBatch({ baseOffset: 2, isControl: true, records: [{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]) }] });
      const control = await core.appendAt({ partitions: [{ queue: q, partition: 0, records: Buffer.concat([copiedBatch([0, 1]), stray]) }] });
      expect(control.partitions[0]).toMatchObject({ error: 'invalid_record', nextOffset: 0 });
      expect(control.partitions[0]!.errorMessage).toMatch(/batch 1 is a control batch without a transactional producer id/);
      const backwards = await core.appendAt({ partitions: [{ queue: q, partition: 0, records: Buffer.concat([copiedBatch([5, 6]), copiedBatch([6])]) }] });
      expect(backwards.partitions[0]).toMatchObject({ error: 'corrupt_message', nextOffset: 0 });
      const unknown = await core.appendAt({ partitions: [{ queue: q, partition: 3, records: copiedBatch([0]) }, { queue: q, partition: 0, records: copiedBatch([0]) }] });
      expect(unknown.partitions.map((p) => p.error)).toEqual(['unknown_partition', null]);
      expect((await readOffsets(core, q)).map((r) => r.offset)).toEqual([0]);
    });

    it('rebuilds the producer windows from the copied batches: that producer goes on with its next sequence, a resend of a copied batch is a duplicate, new ids stay above it', async () => {
      const core = fx.core();
      const q = await fx.newQueue();
      // A source producer (id 90001, epoch 3) wrote sequences 0-1 and 2-4 there; the copy carries them.
      const producer = (baseSequence: number) => ({ producerId: 90_001, producerEpoch: 3, baseSequence });
      const copied = Buffer.concat([copiedBatch([0, 1], { producer: producer(0) }), copiedBatch([2, 3, 4], { producer: producer(2) })]);
      expect((await core.appendAt({ partitions: [{ queue: q, partition: 0, records: copied }] })).partitions[0]).toMatchObject({ error: null, nextOffset: 5 });
      const send = async (offsets: number[], baseSequence: number, label: string) =>
        (await core.append({ partitions: [{ queue: q, partition: 0, records: copiedBatch(offsets, { producer: producer(baseSequence), label }) }] })).partitions[0]!;
      // The resend of the last copied batch: answered with its source offset, nothing written.
      expect(await send([0, 1, 2], 2, 'resent')).toMatchObject({ error: null, baseOffset: 2, duplicate: true });
      // Sequence 5 is the next one: appended after the copy.
      expect(await send([0], 5, 'moved')).toMatchObject({ error: null, baseOffset: 5, duplicate: false });
      expect((await send([0], 9, 'gap')).error).toBe('out_of_order_sequence');
      const [state] = (await core.describeProducers({ queue: q, partition: 0 })).producers;
      expect(state).toMatchObject({ producerId: 90_001, producerEpoch: 3, lastSequence: 5 });
      // The producer may bump its own epoch here (KIP-360), and a new producer gets an id above the copied one.
      expect(await core.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: 90_001, producerEpoch: 3 })).toEqual({ producerId: 90_001, producerEpoch: 4 });
      expect((await core.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 })).producerId).toBeGreaterThan(90_001);
      expect((await readOffsets(core, q)).map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5]);
    });

    it('copies transactions with their markers: an open one holds the last stable offset, an abort enters the aborted index, read_committed sees what the source committed', async () => {
      const core = fx.core();
      const q = await fx.newQueue();
      // Source log: producer 91001 commits 0-1 (marker 2), 91002 aborts 3-4 (marker 6), 91003 opens at 5 and commits later (marker 7).
      const txnBatch = (offsets: number[], producerId: number, baseSequence: number) =>
        buildBatch({ baseOffset: offsets[0]!, isTransactional: true, producerId, producerEpoch: 0, baseSequence, records: offsets.map((o) => ({ offsetDelta: o - offsets[0]!, value: `t${o}`, timestamp: T0 + o })) });
      const marker = (commit: boolean, producerId: number, baseOffset: number) =>
        buildControlBatch({ type: commit ? ControlRecordType.Commit : ControlRecordType.Abort, producerId, producerEpoch: 0, coordinatorEpoch: 3, baseOffset, timestamp: T0 });
      const first = Buffer.concat([txnBatch([0, 1], 91_001, 0), marker(true, 91_001, 2), txnBatch([3, 4], 91_002, 0), txnBatch([5], 91_003, 0), marker(false, 91_002, 6)]);
      expect((await core.appendAt({ partitions: [{ queue: q, partition: 0, records: first }] })).partitions[0]).toMatchObject({ error: null, nextOffset: 7 });
      const read = async (isolation: 'read_committed' | 'read_uncommitted') =>
        (await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation })).partitions[0]!;
      const open = await read('read_committed');
      expect(open).toMatchObject({ error: null, highWatermark: 7, lastStableOffset: 5, abortedTransactions: [{ producerId: 91_002, firstOffset: 3 }] });
      // The stored batches are the copied bytes (the partition leader epoch aside), markers included.
      expect(open.batches.map((b) => Number(decodeBatch(b).header.baseOffset))).toEqual([0, 2, 3]);
      const sent = [txnBatch([0, 1], 91_001, 0), marker(true, 91_001, 2), txnBatch([3, 4], 91_002, 0)];
      expect(open.batches.map((b) => Buffer.from(b).subarray(16).toString('hex'))).toEqual(sent.map((b) => b.subarray(16).toString('hex')));
      expect((await read('read_uncommitted')).batches.length).toBe(5);
      // The open transaction's marker comes in the next copy: the last stable offset moves to the end.
      expect((await core.appendAt({ partitions: [{ queue: q, partition: 0, records: marker(true, 91_003, 7) }] })).partitions[0]).toMatchObject({ error: null, nextOffset: 8 });
      const done = await read('read_committed');
      expect(done).toMatchObject({ highWatermark: 8, lastStableOffset: 8, abortedTransactions: [{ producerId: 91_002, firstOffset: 3 }] });
      expect(done.batches.length).toBe(6);
      const reopened = fx.reopen();
      if (!reopened) return;
      expect(await (await reopened).read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' })).toMatchObject({
        partitions: [{ highWatermark: 8, lastStableOffset: 8, abortedTransactions: [{ producerId: 91_002, firstOffset: 3 }] }],
      });
    });

    it('keeps the gaps across close and reopen', async ({ skip }) => {
      const q = await fx.newQueue();
      await fx.core().appendAt({ partitions: [{ queue: q, partition: 0, records: copiedBatch([3, 8]), endOffset: 10 }] });
      const reopened = fx.reopen();
      if (!reopened) return skip('the engine keeps nothing across a restart');
      const core = await reopened;
      expect((await readOffsets(core, q)).map((r) => r.offset)).toEqual([3, 8]);
      expect((await core.appendAt({ partitions: [{ queue: q, partition: 0, records: copiedBatch([9]) }] })).partitions[0]).toMatchObject({ error: 'already_there', nextOffset: 10 });
    });
  });
}
