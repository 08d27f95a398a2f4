import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildBatch, decodeBatch } from '../../protocol/records/record-batch.js';
import type { Core } from '../../src/core/core.js';
import { uniqueName, type CoreFixture } from './behaviour.js';

/**
 * Kafka's transaction coordinator in the core, written once and run against
 * every engine and through the RPC (./transactions.test.ts). Bodies use only
 * the `Core` interface, as the gateway's handlers do.
 */

interface Producer {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  /** The next sequence per partition. */
  sequences: Map<number, number>;
}

/** A transactional batch of string values from `producer` for `partition`. */
function transactionalBatch(producer: Producer, partition: number, values: string[]): Buffer {
  const baseSequence = producer.sequences.get(partition) ?? 0;
  producer.sequences.set(partition, baseSequence + values.length);
  return buildBatch({
    records: values.map((value) => ({ key: null, value, timestamp: Date.now() })),
    producerId: producer.producerId,
    producerEpoch: producer.producerEpoch,
    baseSequence,
    isTransactional: true,
  });
}

interface ReadBatch {
  offset: number;
  control: boolean;
  /** An abort marker. */
  abort: boolean;
  producerId: number;
  values: string[];
}

function decoded(batches: Buffer[]): ReadBatch[] {
  return batches.map((b) => {
    const d = decodeBatch(b);
    const abort = d.isControl && d.records[0]!.key!.readInt16BE(2) === 0;
    return { offset: Number(d.header.baseOffset), control: d.isControl, abort, producerId: Number(d.header.producerId), values: d.isControl ? [] : d.records.map((r) => r.value!.toString()) };
  });
}

/**
 * What a read_committed consumer keeps, as Kafka's clients compute it: data
 * batches below the last stable offset, minus those of aborted transactions
 * (from the aborted list), minus markers.
 */
async function committedValues(core: Core, queue: string, partition = 0): Promise<string[]> {
  const res = await core.read({ partitions: [{ queue, partition, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
  const p = res.partitions[0]!;
  const batches = decoded(p.batches);
  for (const b of batches) expect(b.offset, 'read_committed returned a batch at or past the LSO').toBeLessThan(p.lastStableOffset);
  // Kafka's consumer: an aborted transaction becomes active at its first offset and ends at its producer's abort marker.
  const pending = [...p.abortedTransactions].sort((a, b) => a.firstOffset - b.firstOffset);
  const active = new Set<number>();
  const kept: string[] = [];
  for (const b of batches) {
    while (pending.length > 0 && pending[0]!.firstOffset <= b.offset) active.add(pending.shift()!.producerId);
    if (b.control) {
      if (b.abort) active.delete(b.producerId);
    } else if (!active.has(b.producerId)) {
      kept.push(...b.values);
    }
  }
  return kept;
}

async function allValues(core: Core, queue: string, partition = 0): Promise<string[]> {
  const res = await core.read({ partitions: [{ queue, partition, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
  return decoded(res.partitions[0]!.batches).flatMap((b) => b.values);
}

async function offsetsOf(core: Core, queue: string, partition = 0) {
  return (await core.offsets({ partitions: [{ queue, partition }] })).partitions[0]!;
}

async function expectCoreError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `expected CoreError ${code}`).toMatchObject({ name: 'CoreError', code });
  expect((error as Error).message.length).toBeGreaterThan(15);
}

export function describeTransactionBehaviour(engineName: string, open: () => Promise<CoreFixture>): void {
  describe(`Kafka transactions in the core: ${engineName}`, () => {
    let fx: CoreFixture;
    let core: Core;

    beforeEach(async () => {
      fx = await open();
      core = fx.core;
    });
    afterEach(async () => {
      await core.close();
      await fx.dispose?.();
    });

    async function newTopic(partitions = 1): Promise<string> {
      const name = uniqueName('txn');
      await core.createQueue({ name, partitions, config: { dedupWindowSeconds: 0, fixedPartitionCount: true } });
      return name;
    }

    async function init(transactionalId: string, transactionTimeoutMs = 60_000): Promise<Producer> {
      const { producerId, producerEpoch } = await core.initProducer({ transactionalId, transactionTimeoutMs, producerId: -1, producerEpoch: -1 });
      return { transactionalId, producerId, producerEpoch, sequences: new Map() };
    }

    const who = (p: Producer) => ({ transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch });

    async function produce(p: Producer, queue: string, partition: number, values: string[]) {
      const res = await core.append({ partitions: [{ queue, partition, records: transactionalBatch(p, partition, values) }] });
      return res.partitions[0]!;
    }

    it('InitProducerId gives a transactional id its producer, bumps the epoch each time and refuses a timeout past 15 minutes or below 1 ms', async () => {
      const id = uniqueName('tid');
      const first = await init(id);
      const second = await init(id);
      expect(second.producerId).toBe(first.producerId);
      expect(second.producerEpoch).toBe(first.producerEpoch + 1);
      await expectCoreError(init(uniqueName('tid'), 900_001), 'invalid_transaction_timeout');
      await expectCoreError(init(uniqueName('tid'), -1), 'invalid_transaction_timeout');
      // KIP-360: the current producer bumps its own epoch; a retry of that call answers the same; an older epoch is fenced.
      const own = { transactionalId: id, transactionTimeoutMs: 60_000, producerId: second.producerId, producerEpoch: second.producerEpoch };
      const bumped = await core.initProducer(own);
      expect(bumped).toEqual({ producerId: second.producerId, producerEpoch: second.producerEpoch + 1 });
      expect(await core.initProducer(own)).toEqual(bumped);
      await expectCoreError(core.initProducer({ ...own, producerEpoch: first.producerEpoch }), 'producer_fenced');
      expect((await core.describeTransactions({ transactionalIds: [id, 'never-seen'] })).transactions).toEqual([
        { transactionalId: id, state: 'Empty', producerId: first.producerId, producerEpoch: second.producerEpoch + 1, timeoutMs: 60_000, startedAt: -1, partitions: [] },
        null,
      ]);
    });

    it('a transactional batch needs its partition in the open transaction; the LSO holds at its first offset until the commit marker', async () => {
      const q = await newTopic();
      await core.append({ partitions: [{ queue: q, partition: 0, records: buildBatch({ records: [{ value: 'plain' }] }) }] });
      const p = await init(uniqueName('tid'));
      expect(await produce(p, q, 0, ['early'])).toMatchObject({ error: 'invalid_txn_state' });
      p.sequences.clear();
      const added = await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      expect(added.partitions).toEqual([{ queue: q, partition: 0, error: null }]);
      expect(await produce(p, q, 0, ['a', 'b'])).toMatchObject({ error: null, baseOffset: 1 });
      expect(await offsetsOf(core, q)).toMatchObject({ highWatermark: 3, lastStableOffset: 1 });
      expect(await committedValues(core, q)).toEqual(['plain']);
      expect(await allValues(core, q)).toEqual(['plain', 'a', 'b']);
      const described = (await core.describeTransactions({ transactionalIds: [p.transactionalId] })).transactions[0]!;
      expect(described).toMatchObject({ state: 'Ongoing', partitions: [{ queue: q, partition: 0 }] });
      expect(described.startedAt).toBeGreaterThan(0);
      expect((await core.describeProducers({ queue: q, partition: 0 })).producers.find((x) => x.producerId === p.producerId)?.currentTxnStartOffset).toBe(1);

      await core.endTxn({ ...who(p), commit: true });
      expect(await offsetsOf(core, q)).toMatchObject({ highWatermark: 4, lastStableOffset: 4 });
      expect(await committedValues(core, q)).toEqual(['plain', 'a', 'b']);
      const res = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 3, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
      const [marker] = res.partitions[0]!.batches.map((b) => decodeBatch(b));
      expect(marker!.isControl).toBe(true);
      expect(marker!.isTransactional).toBe(true);
      // Kafka's commit marker: key (version 0, type 1), value (version 0, coordinator epoch).
      expect([...marker!.records[0]!.key!]).toEqual([0, 0, 0, 1]);
      expect(marker!.records[0]!.value!.length).toBe(6);
      // As in Kafka, the ended transaction keeps its start time.
      expect((await core.describeTransactions({ transactionalIds: [p.transactionalId] })).transactions[0]).toMatchObject({ state: 'CompleteCommit', startedAt: described.startedAt, partitions: [] });
      // EndTxn again the same way is a retry; the other way is refused.
      await core.endTxn({ ...who(p), commit: true });
      await expectCoreError(core.endTxn({ ...who(p), commit: false }), 'invalid_txn_state');
      // After the transaction ended, a resend of its batch (same producer id, epoch and sequence) is refused as Kafka 4.4
      // refuses it, not answered as the idempotent duplicate, and so is a new batch.
      const again = await core.append({ partitions: [{ queue: q, partition: 0, records: buildBatch({ records: [{ key: null, value: 'a' }, { key: null, value: 'b' }], producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: 0, isTransactional: true }) }] });
      expect(again.partitions[0]).toMatchObject({ error: 'invalid_txn_state' });
      expect(await produce(p, q, 0, ['late'])).toMatchObject({ error: 'invalid_txn_state' });
      expect(await offsetsOf(core, q)).toMatchObject({ highWatermark: 4 });
    });

    it('a partition that only got a transaction\'s marker lists its producer with no sequence, and its first batch there starts at 0', async () => {
      const q = await newTopic(2);
      const p = await init(uniqueName('tid'));
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }, { queue: q, partition: 1 }] });
      await produce(p, q, 0, ['only-here']);
      await core.endTxn({ ...who(p), commit: true });
      const [markerOnly] = (await core.describeProducers({ queue: q, partition: 1 })).producers;
      expect(markerOnly).toMatchObject({ producerId: p.producerId, producerEpoch: p.producerEpoch, lastSequence: -1, currentTxnStartOffset: -1 });
      expect(markerOnly!.lastTimestamp).toBeGreaterThan(0);
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 1 }] });
      expect(await produce(p, q, 1, ['first'])).toMatchObject({ error: null, baseOffset: 1 });
      await core.endTxn({ ...who(p), commit: true });
      expect((await core.describeProducers({ queue: q, partition: 1 })).producers).toMatchObject([{ producerId: p.producerId, lastSequence: 0 }]);
    });

    it('an aborted transaction is listed for read_committed readers and its records are never committed ones', async () => {
      const q = await newTopic(2);
      const p = await init(uniqueName('tid'));
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }, { queue: q, partition: 1 }] });
      await produce(p, q, 0, ['x1', 'x2']);
      await produce(p, q, 1, ['y1']);
      await core.endTxn({ ...who(p), commit: false });
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      await produce(p, q, 0, ['kept']);
      await core.endTxn({ ...who(p), commit: true });

      const res = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
      expect(res.partitions[0]!.abortedTransactions).toEqual([{ producerId: p.producerId, firstOffset: 0 }]);
      expect(await committedValues(core, q, 0)).toEqual(['kept']);
      expect(await committedValues(core, q, 1)).toEqual([]);
      expect(await allValues(core, q, 0)).toEqual(['x1', 'x2', 'kept']);
      const uncommitted = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
      expect(uncommitted.partitions[0]!.abortedTransactions).toEqual([]);
      // Past the aborted range the list is empty.
      const later = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 3, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
      expect(later.partitions[0]!.abortedTransactions).toEqual([]);
      expect(await core.offsetForTimestamp({ queue: q, partition: 1, timestamp: -1, isolation: 'read_committed' })).toMatchObject({ offset: 2 });
    });

    it('a new instance fences the old one: its calls are producer_fenced, its batches invalid_producer_epoch, its open transaction aborted', async () => {
      const q = await newTopic();
      const id = uniqueName('tid');
      const zombie = await init(id);
      await core.addPartitionsToTxn({ ...who(zombie), partitions: [{ queue: q, partition: 0 }] });
      await produce(zombie, q, 0, ['zombie']);
      expect((await offsetsOf(core, q)).lastStableOffset).toBe(0);
      const successor = await init(id);
      // The zombie's open transaction was aborted under the new epoch: the LSO moved on.
      expect(await offsetsOf(core, q)).toMatchObject({ highWatermark: 2, lastStableOffset: 2 });
      expect(await committedValues(core, q)).toEqual([]);
      await expectCoreError(core.addPartitionsToTxn({ ...who(zombie), partitions: [{ queue: q, partition: 0 }] }), 'producer_fenced');
      await expectCoreError(core.endTxn({ ...who(zombie), commit: true }), 'producer_fenced');
      await expectCoreError(core.addOffsetsToTxn({ ...who(zombie), group: 'g' }), 'producer_fenced');
      await core.addPartitionsToTxn({ ...who(successor), partitions: [{ queue: q, partition: 0 }] });
      expect(await produce(zombie, q, 0, ['late'])).toMatchObject({ error: 'invalid_producer_epoch' });
      await expectCoreError(core.endTxn({ ...who(successor), producerId: successor.producerId + 1000, commit: true }), 'invalid_producer_id_mapping');
      await produce(successor, q, 0, ['successor']);
      await core.endTxn({ ...who(successor), commit: true });
      expect(await committedValues(core, q)).toEqual(['successor']);
    });

    it('offsets sent with a transaction are pending (unstable) until the commit writes them to the group; an abort drops them', async () => {
      const q = await newTopic();
      const group = uniqueName('group');
      const p = await init(uniqueName('tid'));
      await core.commitOffsets({ group, offsets: [{ queue: q, partition: 0, offset: 1, leaderEpoch: -1, metadata: null }] });
      await expectCoreError(core.txnOffsetCommit({ ...who(p), group, offsets: [{ queue: q, partition: 0, offset: 5, leaderEpoch: -1, metadata: null }] }), 'invalid_txn_state');
      await core.addOffsetsToTxn({ ...who(p), group });
      await core.txnOffsetCommit({ ...who(p), group, offsets: [{ queue: q, partition: 0, offset: 5, leaderEpoch: -1, metadata: 'm' }] });
      expect((await core.unstableOffsets({ group, partitions: [{ queue: q, partition: 0 }] })).partitions).toEqual([{ queue: q, partition: 0 }]);
      expect((await core.fetchOffsets({ group, partitions: [{ queue: q, partition: 0 }] })).offsets[0]!.offset).toBe(1);
      await core.endTxn({ ...who(p), commit: false });
      expect((await core.unstableOffsets({ group, partitions: null })).partitions).toEqual([]);
      expect((await core.fetchOffsets({ group, partitions: [{ queue: q, partition: 0 }] })).offsets[0]!.offset).toBe(1);

      await core.addOffsetsToTxn({ ...who(p), group });
      await core.txnOffsetCommit({ ...who(p), group, offsets: [{ queue: q, partition: 0, offset: 7, leaderEpoch: 2, metadata: 'm' }] });
      await core.endTxn({ ...who(p), commit: true });
      expect((await core.fetchOffsets({ group, partitions: [{ queue: q, partition: 0 }] })).offsets[0]).toEqual({ queue: q, partition: 0, offset: 7, leaderEpoch: 2, metadata: 'm' });
    });

    it('a plain commit made after a pending transactional offset wins when that transaction commits, as in Kafka', async () => {
      const q = await newTopic(2);
      const group = uniqueName('group');
      const p = await init(uniqueName('tid'));
      const at = (partition: number, offset: number) => ({ queue: q, partition, offset, leaderEpoch: -1, metadata: null });
      const committed = async () => (await core.fetchOffsets({ group, partitions: [{ queue: q, partition: 0 }, { queue: q, partition: 1 }] })).offsets.map((o) => o.offset);
      await core.addOffsetsToTxn({ ...who(p), group });
      await core.txnOffsetCommit({ ...who(p), group, offsets: [at(0, 9), at(1, 9)] });
      await core.commitOffsets({ group, offsets: [at(0, 7)] });
      // Still pending, so still unstable, though the plain commit will win.
      expect((await core.unstableOffsets({ group, partitions: [{ queue: q, partition: 0 }] })).partitions).toEqual([{ queue: q, partition: 0 }]);
      await core.endTxn({ ...who(p), commit: true });
      expect(await committed()).toEqual([7, 9]);

      // A transactional offset sent again after the plain commit is the newer one.
      await core.addOffsetsToTxn({ ...who(p), group });
      await core.txnOffsetCommit({ ...who(p), group, offsets: [at(0, 10)] });
      await core.commitOffsets({ group, offsets: [at(0, 8)] });
      await core.txnOffsetCommit({ ...who(p), group, offsets: [at(0, 11)] });
      await core.endTxn({ ...who(p), commit: true });
      expect(await committed()).toEqual([11, 9]);
    });

    it('a transaction left open past its timeout is aborted by the core, the LSO moves on and the abandoned producer is fenced', async ({ skip }) => {
      if (!fx.advanceClock || !fx.runMaintenance) return skip('the fixture cannot move the clock');
      const q = await newTopic();
      const p = await init(uniqueName('tid'), 5_000);
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      await produce(p, q, 0, ['abandoned']);
      await fx.advanceClock(4_000);
      await fx.runMaintenance();
      expect((await offsetsOf(core, q)).lastStableOffset).toBe(0);
      await fx.advanceClock(2_000);
      await fx.runMaintenance();
      expect(await offsetsOf(core, q)).toMatchObject({ highWatermark: 2, lastStableOffset: 2 });
      expect(await committedValues(core, q)).toEqual([]);
      const timedOut = (await core.describeTransactions({ transactionalIds: [p.transactionalId] })).transactions[0]!;
      expect(timedOut).toMatchObject({ state: 'CompleteAbort', producerEpoch: p.producerEpoch + 1 });
      expect(timedOut.startedAt).toBeGreaterThan(0);
      await expectCoreError(core.endTxn({ ...who(p), commit: true }), 'producer_fenced');
      expect((await core.listTransactions({ states: ['CompleteAbort'], producerIds: [p.producerId] })).transactions).toEqual([
        { transactionalId: p.transactionalId, producerId: p.producerId, state: 'CompleteAbort' },
      ]);
    });

    it('native pop delivers committed records only: not past the LSO, not aborted ones, never a marker', async () => {
      const q = await newTopic();
      const p = await init(uniqueName('tid'));
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      await produce(p, q, 0, ['aborted']);
      await core.endTxn({ ...who(p), commit: false });
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      await produce(p, q, 0, ['c1', 'c2']);
      await core.endTxn({ ...who(p), commit: true });
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      await produce(p, q, 0, ['open']);
      const group = uniqueName('native');
      const popped: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await core.pop({ queue: q, consumerGroup: group, owner: 'w', batch: 10, waitMs: 0 });
        if (res.messages.length === 0) break;
        for (const m of res.messages) {
          popped.push(Buffer.isBuffer(m.payload) ? m.payload.toString() : String(m.payload));
          await core.ack({ queue: q, partition: m.partition, consumerGroup: group, offset: m.offset, status: 'completed', leaseId: res.lease!.id });
        }
      }
      expect(popped).toEqual(['c1', 'c2']);
      await core.endTxn({ ...who(p), commit: true });
      const after = await core.pop({ queue: q, consumerGroup: group, owner: 'w', batch: 10, waitMs: 0 });
      expect(after.messages.map((m) => (Buffer.isBuffer(m.payload) ? m.payload.toString() : String(m.payload)))).toEqual(['open']);
    });

    it('a transaction survives a restart between produce and EndTxn', async ({ skip }) => {
      if (!fx.reopen) return skip('the engine keeps nothing across a restart');
      const q = await newTopic();
      const group = uniqueName('group');
      const p = await init(uniqueName('tid'));
      await core.addPartitionsToTxn({ ...who(p), partitions: [{ queue: q, partition: 0 }] });
      await core.addOffsetsToTxn({ ...who(p), group });
      await produce(p, q, 0, ['before-restart']);
      await core.txnOffsetCommit({ ...who(p), group, offsets: [{ queue: q, partition: 0, offset: 3, leaderEpoch: -1, metadata: null }] });
      core = await fx.reopen();
      expect((await offsetsOf(core, q)).lastStableOffset).toBe(0);
      expect(await produce(p, q, 0, ['after-restart'])).toMatchObject({ error: null });
      await core.endTxn({ ...who(p), commit: true });
      expect(await committedValues(core, q)).toEqual(['before-restart', 'after-restart']);
      expect((await core.fetchOffsets({ group, partitions: [{ queue: q, partition: 0 }] })).offsets[0]!.offset).toBe(3);
    });
  });
}
