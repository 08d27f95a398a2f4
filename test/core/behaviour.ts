import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildBatch, decodeBatch } from '../../protocol/records/record-batch.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { crc32c } from '../../protocol/records/crc32c.js';
import type { AclBinding, Core, PushItem, QueueConfig } from '../../src/core/core.js';
import { describeConsumerGroups } from './behaviour-consumer-groups.js';
import { describeCopies } from './behaviour-copies.js';
import { describeNative } from './behaviour-native.js';
import { describeStreams } from './behaviour-streams.js';

/**
 * The core's behaviour, written once and run against every engine (and, later,
 * through the RPC transport). Test bodies use only the `Core` interface; what
 * an engine cannot offer (a restart, a clock to move) the fixture leaves out
 * and the tests that need it report themselves skipped.
 */

export interface CoreFixture {
  core: Core;
  /** Closes the core and opens another on the same storage. Durability tests run only when given. */
  reopen?: () => Promise<Core>;
  /** Moves the engine's clock forward (TTLs, dedup windows, leases, retention). */
  advanceClock?: (ms: number) => void | Promise<void>;
  /** Runs the retention reaper and expiry now, as its timer would. */
  runMaintenance?: () => void | Promise<void>;
  /** Releases what the fixture holds after the core is closed. */
  dispose?: () => Promise<void>;
}

let nameCounter = 0;
/** Names unique across runs, so engines that share storage between tests never collide. */
export function uniqueName(base: string): string {
  return `${base}-${process.pid.toString(36)}-${Date.now().toString(36)}-${(nameCounter++).toString(36)}`;
}

interface BatchOptions {
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  timestamp?: number;
}

/** A v2 batch of string values, as a producer would send it. */
export function recordBatch(values: string[], options: BatchOptions = {}): Buffer {
  return buildBatch({
    records: values.map((value) => ({ key: null, value, timestamp: options.timestamp ?? Date.now() })),
    producerId: options.producerId ?? -1,
    producerEpoch: options.producerEpoch ?? -1,
    baseSequence: options.baseSequence ?? -1,
  });
}

function recordsOf(batches: Buffer[]): { offset: number; value: string }[] {
  return batches.flatMap((b) => {
    const decoded = decodeBatch(b);
    return decoded.records.map((r) => ({ offset: Number(decoded.header.baseOffset) + r.offsetDelta, value: r.value!.toString('utf8') }));
  });
}

async function readAll(core: Core, queue: string, partition = 0, fetchOffset = 0): Promise<{ offset: number; value: string }[]> {
  const out: { offset: number; value: string }[] = [];
  let at = fetchOffset;
  for (;;) {
    const res = await core.read({ partitions: [{ queue, partition, fetchOffset: at, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
    const p = res.partitions[0]!;
    expect(p.error).toBeNull();
    const records = recordsOf(p.batches).filter((r) => r.offset >= at);
    if (records.length === 0) return out;
    out.push(...records);
    at = records[records.length - 1]!.offset + 1;
  }
}

async function highWatermark(core: Core, queue: string, partition = 0): Promise<number> {
  const res = await core.offsets({ partitions: [{ queue, partition }] });
  return res.partitions[0]!.highWatermark;
}

async function expectCoreError(promise: Promise<unknown>, code: string, mentions?: RegExp): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `expected CoreError ${code}`).toMatchObject({ name: 'CoreError', code });
  const message = (error as Error).message;
  expect(message.length).toBeGreaterThan(15);
  if (mentions) expect(message).toMatch(mentions);
}

export function describeCoreBehaviour(engineName: string, open: () => Promise<CoreFixture>): void {
  describe(`Core behaviour: ${engineName}`, () => {
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

    async function newQueue(config: Partial<QueueConfig> = {}, partitions = 1): Promise<string> {
      const name = uniqueName('q');
      await core.createQueue({ name, partitions, config });
      return name;
    }

    async function push(items: PushItem[]) {
      return (await core.push({ items })).items;
    }

    /** How many messages a native partition holds (its high watermark); 0 before it exists. */
    async function storedIn(queue: string, partition = 'Default'): Promise<number> {
      const index = (await core.describeQueue({ name: queue }))!.partitions.find((p) => p.name === partition)?.index;
      return index === undefined ? 0 : highWatermark(core, queue, index);
    }

    /** Pops one message for a group and returns it with its lease. */
    async function popOne(queue: string, consumerGroup: string, partition?: string) {
      const res = await core.pop({ queue, consumerGroup, owner: 'worker-1', batch: 1, waitMs: 0, ...(partition ? { partition } : {}) });
      expect(res.messages).toHaveLength(1);
      return { message: res.messages[0]!, lease: res.lease! };
    }

    // ─── seeds/dedup-and-once.txt, one test per rule ─────────────────────────

    describe('dedup and once', () => {
      it('"Push the same id to the same partition again, inside the queue’s dedup window, and the broker writes nothing and answers with the original message."', async () => {
        const q = await newQueue();
        const [first] = await push([{ queue: q, partition: 'customer-42', transactionId: 'order-9137-paid', payload: { orderId: 9137, amount: 99.5 } }]);
        const [retry] = await push([{ queue: q, partition: 'customer-42', transactionId: 'order-9137-paid', payload: { orderId: 9137, amount: 99.5 } }]);
        expect(first!.status).toBe('queued');
        expect(retry!.status).toBe('duplicate');
        expect(retry!.messageId).toBe(first!.messageId);
        expect(await highWatermark(core, q, first!.partitionIndex)).toBe(1);
      });

      it('"the retry answers ... "status": "duplicate", the original message_id and the original offset, and nothing is appended."', async () => {
        const q = await newQueue();
        await push([{ queue: q, transactionId: 'a', payload: 1 }, { queue: q, transactionId: 'b', payload: 2 }]);
        const [retry] = await push([{ queue: q, transactionId: 'b', payload: 2 }]);
        expect(retry).toMatchObject({ status: 'duplicate', offset: 1, transactionId: 'b' });
        const popped = await core.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 10, waitMs: 0 });
        expect(popped.messages.map((m) => m.payload)).toEqual([1, 2]);
        expect(popped.messages[1]!.messageId).toBe(retry!.messageId);
      });

      it('"The scope is one partition. The same id in another partition, or another queue, is a different message"', async () => {
        const q1 = await newQueue();
        const q2 = await newQueue();
        const results = await push([
          { queue: q1, partition: 'p1', transactionId: 'same', payload: 1 },
          { queue: q1, partition: 'p2', transactionId: 'same', payload: 2 },
          { queue: q2, partition: 'p1', transactionId: 'same', payload: 3 },
        ]);
        expect(results.map((r) => r.status)).toEqual(['queued', 'queued', 'queued']);
        expect(new Set(results.map((r) => r.messageId)).size).toBe(3);
      });

      it('"The window is the queue’s dedupWindowSeconds, 3,600 seconds by default"', async ({ skip }) => {
        const q = await newQueue();
        expect((await core.describeQueue({ name: q }))!.config.dedupWindowSeconds).toBe(3600);
        if (!fx.advanceClock) return skip('the fixture cannot move the clock');
        await push([{ queue: q, transactionId: 't', payload: 1 }]);
        await fx.advanceClock(3599_000);
        expect((await push([{ queue: q, transactionId: 't', payload: 1 }]))[0]!.status).toBe('duplicate');
      });

      it('"0 turns the check off."', async () => {
        const q = await newQueue({ dedupWindowSeconds: 0 });
        await push([{ queue: q, transactionId: 't', payload: 1 }]);
        const [again] = await push([{ queue: q, transactionId: 't', payload: 1 }]);
        expect(again!.status).toBe('queued');
        expect(again!.offset).toBe(1);
      });

      it('"Inside one request, an id repeated for the same queue and partition is stored once, whatever the window, and the repeats answer duplicate."', async () => {
        for (const dedupWindowSeconds of [3600, 0]) {
          const q = await newQueue({ dedupWindowSeconds });
          const results = await push([
            { queue: q, transactionId: 'x', payload: 'first' },
            { queue: q, transactionId: 'y', payload: 'other' },
            { queue: q, transactionId: 'x', payload: 'repeat' },
          ]);
          expect(results.map((r) => r.status)).toEqual(['queued', 'queued', 'duplicate']);
          expect(results[2]!.messageId).toBe(results[0]!.messageId);
          expect(results[2]!.offset).toBe(results[0]!.offset);
          expect(await storedIn(q)).toBe(2);
        }
      });

      it('"A push without an id gets the message id as its transactionId, which is new every time, so nothing is deduplicated"', async () => {
        const q = await newQueue();
        const results = await push([{ queue: q, payload: 'same' }, { queue: q, payload: 'same' }]);
        const again = await push([{ queue: q, payload: 'same' }]);
        for (const r of [...results, ...again]) {
          expect(r.status).toBe('queued');
          expect(r.transactionId).toBe(r.messageId);
          expect(r.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        }
        expect(await storedIn(q)).toBe(3);
      });

      it('"A queue that already existed keeps its own setting."', async () => {
        const q = await newQueue({ dedupWindowSeconds: 60 });
        const again = await core.createQueue({ name: q, partitions: 3, config: { dedupWindowSeconds: 0 }, ifNotExists: true });
        expect(again.config.dedupWindowSeconds).toBe(60);
        expect(again.partitions).toHaveLength(1);
        const kafkaStyle = await core.createQueue({ name: uniqueName('topic'), partitions: 2, config: { dedupWindowSeconds: 0 } });
        expect(kafkaStyle.config.dedupWindowSeconds).toBe(0);
        expect(kafkaStyle.partitions.map((p) => p.name)).toEqual(['0', '1']);
      });

      it('"When a push inside a transaction carries an id its partition already stores, the whole transaction rolls back with reason: "duplicate": the ack, the KV writes ... are not written either."', async () => {
        const q = await newQueue();
        const inbox = await newQueue();
        await push([{ queue: inbox, payload: 'event' }]);
        const { message, lease } = await popOne(inbox, 'mailer');
        await push([{ queue: q, transactionId: 'mail-1', payload: 'sent' }]);
        const res = await core.transaction({
          operations: [
            { op: 'ack', queue: inbox, partition: message.partition, consumerGroup: 'mailer', offset: message.offset, status: 'completed', leaseId: lease.id },
            { op: 'kv.put', ns: 'app', key: 'k', value: 'written?' },
            { op: 'push', queue: q, transactionId: 'mail-1', payload: 'sent' },
          ],
        });
        expect(res).toMatchObject({ success: false, reason: 'duplicate', failedIndex: 2 });
        expect(await core.kvGet({ ns: 'app', key: 'k' })).toBeNull();
        expect(await storedIn(q)).toBe(1);
        // The ack did not happen: the message is still under its lease, and after release it comes back.
        expect((await core.ack({ queue: inbox, partition: message.partition, consumerGroup: 'mailer', offset: message.offset, status: 'failed', leaseId: lease.id })).acked).toBe(true);
        expect((await popOne(inbox, 'mailer')).message.offset).toBe(message.offset);
      });

      it('"If the first attempt committed, the retry finds its push ids and writes nothing; if it didn’t, the retry commits."', async () => {
        const q = await newQueue();
        const attempt = () =>
          core.transaction({ operations: [{ op: 'push', queue: q, transactionId: 'step-1', payload: 1 }, { op: 'kv.incr', ns: 'app', key: 'count', by: 1 }] });
        expect((await attempt()).success).toBe(true);
        expect(await attempt()).toMatchObject({ success: false, reason: 'duplicate', failedIndex: 0 });
        expect((await core.kvGet({ ns: 'app', key: 'count' }))!.value).toBe(1);
        expect(await storedIn(q)).toBe(1);
      });

      it('"An id repeated within the same transaction is different: it is stored once, answered with "duplicate": true, and the transaction commits."', async () => {
        const q = await newQueue();
        const res = await core.transaction({
          operations: [
            { op: 'push', queue: q, transactionId: 'same', payload: 'a' },
            { op: 'push', queue: q, transactionId: 'same', payload: 'b' },
          ],
        });
        expect(res.success).toBe(true);
        if (!res.success) return;
        expect(res.results[0]).toMatchObject({ status: 'queued', duplicate: false });
        expect(res.results[1]).toMatchObject({ status: 'duplicate', duplicate: true });
        expect(await storedIn(q)).toBe(1);
      });

      it('a push with ifStored: "answer" answers a stored id duplicate and lets the rest of the transaction commit', async () => {
        const q = await newQueue();
        const original = (await push([{ queue: q, transactionId: 'known', payload: 'first' }]))[0]!;
        const res = await core.transaction({
          operations: [
            { op: 'push', ifStored: 'answer', queue: q, transactionId: 'known', payload: 'again' },
            { op: 'push', ifStored: 'answer', queue: q, payload: 'no id' },
            { op: 'kv.put', ns: 'app', key: 'answered', value: true },
          ],
        });
        expect(res.success).toBe(true);
        if (!res.success) return;
        expect(res.results[0]).toMatchObject({ status: 'duplicate', duplicate: true, messageId: original.messageId });
        expect(res.results[1]).toMatchObject({ status: 'queued', duplicate: false });
        expect((await core.kvGet({ ns: 'app', key: 'answered' }))!.value).toBe(true);
        expect(await storedIn(q)).toBe(2);
        await expect(core.transaction({ operations: [{ op: 'push', ifStored: 'sometimes' as never, queue: q, payload: 1 }] })).rejects.toMatchObject({ code: 'invalid_argument' });
      });

      it('a required ack that the group does not hold rolls the whole transaction back with reason not_acked; an optional one answers acked: false', async () => {
        const inbox = await newQueue();
        const out = await newQueue();
        await push([{ queue: inbox, payload: 'job' }]);
        const { message, lease } = await popOne(inbox, 'worker');
        const ackOp = { op: 'ack' as const, queue: inbox, partition: message.partition, consumerGroup: 'worker', offset: message.offset, status: 'completed' as const };
        expect((await core.ack({ ...ackOp, leaseId: lease.id })).acked).toBe(true);
        // Acked already: the group no longer holds it.
        const required = await core.transaction({ operations: [{ op: 'push', queue: out, payload: 'result' }, { ...ackOp, required: true }, { op: 'kv.incr', ns: 'app', key: 'done', by: 1 }] });
        expect(required).toMatchObject({ success: false, reason: 'not_acked', failedIndex: 1 });
        expect(await storedIn(out)).toBe(0);
        expect(await core.kvGet({ ns: 'app', key: 'done' })).toBeNull();
        const optional = await core.transaction({ operations: [{ op: 'push', queue: out, payload: 'result' }, ackOp] });
        expect(optional.success).toBe(true);
        if (optional.success) expect(optional.results[1]).toEqual({ acked: false });
        expect(await storedIn(out)).toBe(1);
      });

      it('"once writes a marker in the step’s transaction and refuses the whole transaction when the marker already exists"', async () => {
        const emails = await newQueue();
        const step = () =>
          core.transaction({
            operations: [
              { op: 'push', queue: emails, payload: { to: 'ada' } },
              { op: 'once', ns: 'welcome', key: 'user-1', lifetime: { ttlMs: 7 * 24 * 3600_000 } },
            ],
          });
        expect((await step()).success).toBe(true);
        const second = await step();
        expect(second).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 1 });
        expect(await storedIn(emails)).toBe(1);
      });

      it('"once(ns, key, opts) is a KV putIfAbsent with required: true. A lost gate answers ... reason: "kv_precondition""', async () => {
        await core.kvPut({ ns: 'gate', key: 'k', value: 'taken' });
        const viaOnce = await core.transaction({ operations: [{ op: 'kv.put', ns: 'app', key: 'x', value: 1 }, { op: 'once', ns: 'gate', key: 'k', lifetime: { forever: true } }] });
        const viaPutIfAbsent = await core.transaction({
          operations: [{ op: 'kv.put', ns: 'app', key: 'x', value: 1 }, { op: 'kv.putIfAbsent', ns: 'gate', key: 'k', value: true, required: true }],
        });
        for (const res of [viaOnce, viaPutIfAbsent]) {
          expect(res).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 1 });
          if (!res.success) expect(res.message).toMatch(/gate/);
        }
        expect(await core.kvGet({ ns: 'app', key: 'x' })).toBeNull();
        // Not required: a putIfAbsent that loses does not roll anything back.
        const optional = await core.transaction({ operations: [{ op: 'kv.putIfAbsent', ns: 'gate', key: 'k', value: 'mine' }, { op: 'kv.put', ns: 'app', key: 'x', value: 2 }] });
        expect(optional.success).toBe(true);
        expect((await core.kvGet({ ns: 'gate', key: 'k' }))!.value).toBe('taken');
      });

      it('"The ack rolled back too, which is why the example acks on its own."', async () => {
        const inbox = await newQueue();
        await push([{ queue: inbox, payload: 'signup' }]);
        await core.once({ ns: 'welcome', key: 'user-7', lifetime: { forever: true } });
        const { message, lease } = await popOne(inbox, 'mailer');
        const ackOp = { op: 'ack' as const, queue: inbox, partition: message.partition, consumerGroup: 'mailer', offset: message.offset, status: 'completed' as const };
        const res = await core.transaction({ operations: [ackOp, { op: 'once', ns: 'welcome', key: 'user-7', lifetime: { forever: true } }] });
        expect(res.success).toBe(false);
        expect((await core.fetchOffsets({ group: 'mailer', partitions: [{ queue: inbox, partition: message.partitionIndex }] })).offsets[0]!.offset).toBe(-1);
        expect((await core.ack({ ...ackOp, leaseId: lease.id })).acked).toBe(true);
        expect((await core.fetchOffsets({ group: 'mailer', partitions: [{ queue: inbox, partition: message.partitionIndex }] })).offsets[0]!.offset).toBe(1);
      });

      it('"Outside a transaction, queen.kv.once(ns, key, { ttl }) returns { won }."', async () => {
        expect(await core.once({ ns: 'jobs', key: 'nightly', lifetime: { ttlMs: 60_000 } })).toEqual({ won: true });
        expect(await core.once({ ns: 'jobs', key: 'nightly', lifetime: { ttlMs: 60_000 } })).toEqual({ won: false });
        expect(await core.once({ ns: 'jobs', key: 'other', lifetime: { ttlMs: 60_000 } })).toEqual({ won: true });
      });

      it('"A transaction checks its pushes before its KV operations."', async () => {
        const q = await newQueue();
        await push([{ queue: q, transactionId: 'det-1', payload: 1 }]);
        await core.once({ ns: 'steps', key: 's1', lifetime: { forever: true } });
        const res = await core.transaction({
          operations: [
            { op: 'once', ns: 'steps', key: 's1', lifetime: { forever: true } },
            { op: 'push', queue: q, transactionId: 'det-1', payload: 1 },
          ],
        });
        expect(res).toMatchObject({ success: false, reason: 'duplicate', failedIndex: 1 });
      });

      it('"The window is bounded: outside dedupWindowSeconds, the same id is a new message."', async ({ skip }) => {
        if (!fx.advanceClock) return skip('the fixture cannot move the clock');
        const q = await newQueue({ dedupWindowSeconds: 10 });
        const [first] = await push([{ queue: q, transactionId: 't', payload: 1 }]);
        await fx.advanceClock(9_000);
        expect((await push([{ queue: q, transactionId: 't', payload: 1 }]))[0]!.status).toBe('duplicate');
        await fx.advanceClock(1_001);
        const [later] = await push([{ queue: q, transactionId: 't', payload: 1 }]);
        expect(later).toMatchObject({ status: 'queued', offset: 1 });
        expect(later!.messageId).not.toBe(first!.messageId);
      });

      it('"Dedup is per partition, so every retry of a message has to go to the same partition."', async () => {
        const q = await newQueue();
        await push([{ queue: q, partition: 'a', transactionId: 't', payload: 1 }]);
        const [elsewhere] = await push([{ queue: q, partition: 'b', transactionId: 't', payload: 1 }]);
        const [same] = await push([{ queue: q, partition: 'a', transactionId: 't', payload: 1 }]);
        expect(elsewhere!.status).toBe('queued');
        expect(same!.status).toBe('duplicate');
      });

      it('"A once marker lives as long as you say (ttl, or forever: true). After it expires, a redelivery runs the step again"', async ({ skip }) => {
        if (!fx.advanceClock) return skip('the fixture cannot move the clock');
        await core.once({ ns: 'step', key: 'ttl', lifetime: { ttlMs: 1000 } });
        await core.once({ ns: 'step', key: 'forever', lifetime: { forever: true } });
        await fx.advanceClock(999);
        expect(await core.once({ ns: 'step', key: 'ttl', lifetime: { ttlMs: 1000 } })).toEqual({ won: false });
        await fx.advanceClock(2);
        expect(await core.once({ ns: 'step', key: 'ttl', lifetime: { ttlMs: 1000 } })).toEqual({ won: true });
        await fx.advanceClock(365 * 24 * 3600_000);
        expect(await core.once({ ns: 'step', key: 'forever', lifetime: { forever: true } })).toEqual({ won: false });
      });

      it('"A transactionId is at most 65,535 bytes."', async () => {
        const q = await newQueue();
        const atLimit = 'é'.repeat(32_767) + 'x'; // 65,535 bytes in UTF-8
        expect((await push([{ queue: q, transactionId: atLimit, payload: 1 }]))[0]!.status).toBe('queued');
        await expectCoreError(push([{ queue: q, payload: 'ok' }, { queue: q, transactionId: atLimit + 'y', payload: 2 }]), 'transaction_id_too_long', /65,?535/);
        await expectCoreError(core.transaction({ operations: [{ op: 'kv.put', ns: 'a', key: 'b', value: 1 }, { op: 'push', queue: q, transactionId: 'x'.repeat(65_536), payload: 2 }] }), 'transaction_id_too_long');
        expect(await storedIn(q)).toBe(1);
        expect(await core.kvGet({ ns: 'a', key: 'b' })).toBeNull();
      });

      it('"after a failover the new leader answers a retry the same way, with the original offset" (close and reopen)', async ({ skip }) => {
        if (!fx.reopen) return skip('the engine keeps nothing across a restart');
        const q = await newQueue();
        await push([{ queue: q, transactionId: 'a', payload: 1 }]);
        const [first] = await push([{ queue: q, transactionId: 'b', payload: 2 }]);
        core = await fx.reopen();
        const [retry] = await push([{ queue: q, transactionId: 'b', payload: 2 }]);
        expect(retry).toMatchObject({ status: 'duplicate', offset: first!.offset, messageId: first!.messageId });
      });
    });

    // ─── The idempotent producer (Kafka's broker rules) ──────────────────────

    describe('idempotent producer', () => {
      async function producerQueue() {
        const q = await newQueue({ dedupWindowSeconds: 0 });
        const { producerId, producerEpoch } = await core.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
        const send = async (values: string[], baseSequence: number, epoch = producerEpoch) =>
          (await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(values, { producerId, producerEpoch: epoch, baseSequence }) }] })).partitions[0]!;
        return { q, producerId, producerEpoch, send };
      }

      it('accepts the next sequence', async () => {
        const { q, send } = await producerQueue();
        expect(await send(['a', 'b'], 0)).toMatchObject({ error: null, baseOffset: 0, duplicate: false });
        expect(await send(['c'], 2)).toMatchObject({ error: null, baseOffset: 2, duplicate: false });
        expect((await readAll(core, q)).map((r) => r.value)).toEqual(['a', 'b', 'c']);
      });

      it('answers an exact resend with the original base offset and writes nothing', async () => {
        const { q, send } = await producerQueue();
        await send(['a', 'b'], 0);
        await send(['c'], 2);
        expect(await send(['a', 'b'], 0)).toMatchObject({ error: null, baseOffset: 0, duplicate: true });
        expect(await highWatermark(core, q)).toBe(3);
      });

      it('refuses a gap with out_of_order_sequence and writes nothing', async () => {
        const { q, send } = await producerQueue();
        await send(['a'], 0);
        const gap = await send(['c'], 2);
        expect(gap.error).toBe('out_of_order_sequence');
        expect(gap.errorMessage).toMatch(/expected 1/);
        expect(await highWatermark(core, q)).toBe(1);
      });

      it('refuses a lower epoch with invalid_producer_epoch', async () => {
        const { q, producerId, producerEpoch, send } = await producerQueue();
        const bumped = await core.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId, producerEpoch });
        expect(bumped).toEqual({ producerId, producerEpoch: producerEpoch + 1 });
        await send(['new'], 0, bumped.producerEpoch);
        expect((await send(['old'], 1, producerEpoch)).error).toBe('invalid_producer_epoch');
        expect(await highWatermark(core, q)).toBe(1);
      });

      it('starts a new epoch at sequence 0', async () => {
        const { q, send, producerEpoch } = await producerQueue();
        await send(['a', 'b', 'c'], 0);
        expect((await send(['d'], 3, producerEpoch + 1)).error).toBe('out_of_order_sequence');
        expect(await send(['d'], 0, producerEpoch + 1)).toMatchObject({ error: null, baseOffset: 3 });
        const [state] = (await core.describeProducers({ queue: q, partition: 0 })).producers;
        expect(state).toMatchObject({ producerEpoch: producerEpoch + 1, lastSequence: 0 });
      });

      it('ends several in-flight batches that arrive out of order in the right order once they are resent', async () => {
        const { q, send } = await producerQueue();
        const inFlight = [['s0'], ['s1', 's1b'], ['s3'], ['s4', 's4b', 's4c'], ['s7']];
        const sequences = [0, 1, 3, 4, 7];
        const pending = new Set([0, 1, 2, 3, 4]);
        // They arrive 2, 0, 4, 1, 3; a refused batch is resent after the others, as the client does.
        let arrival = [2, 0, 4, 1, 3];
        while (pending.size > 0) {
          const refused: number[] = [];
          for (const i of arrival) {
            const res = await send(inFlight[i]!, sequences[i]!);
            if (res.error === 'out_of_order_sequence') refused.push(i);
            else {
              expect(res.error).toBeNull();
              pending.delete(i);
            }
          }
          arrival = refused;
        }
        expect((await readAll(core, q)).map((r) => r.value)).toEqual(inFlight.flat());
      });

      it('keeps the last five batches: a resend of an older one is no longer a duplicate', async () => {
        const { q, send } = await producerQueue();
        for (let seq = 0; seq < 6; seq++) await send([`v${seq}`], seq);
        expect(await send(['v1'], 1)).toMatchObject({ duplicate: true, baseOffset: 1 });
        expect((await send(['v0'], 0)).error).toBe('out_of_order_sequence');
        expect(await highWatermark(core, q)).toBe(6);
      });

      it('does not check a producer that is not idempotent (producer id -1)', async () => {
        const q = await newQueue();
        const records = recordBatch(['x']);
        await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        const again = await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        expect(again.partitions[0]).toMatchObject({ error: null, baseOffset: 1, duplicate: false });
      });

      it('answers a retried requestId with the first result and appends nothing', async () => {
        const q = await newQueue();
        const req = { requestId: uniqueName('req'), partitions: [{ queue: q, partition: 0, records: recordBatch(['once']) }] };
        const first = await core.append(req);
        const retry = await core.append(req);
        expect(retry).toEqual(first);
        expect(await highWatermark(core, q)).toBe(1);
      });

      it('gives a transactional id the same producer id with a higher epoch each time', async () => {
        const txn = uniqueName('txn');
        const a = await core.initProducer({ transactionalId: txn, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
        const b = await core.initProducer({ transactionalId: txn, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
        const other = await core.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
        expect(b).toEqual({ producerId: a.producerId, producerEpoch: a.producerEpoch + 1 });
        expect(other.producerId).not.toBe(a.producerId);
      });

      it("ignores an idempotent producer's transaction timeout, which librdkafka sends as -1", async () => {
        const a = await core.initProducer({ transactionalId: null, transactionTimeoutMs: -1, producerId: -1, producerEpoch: -1 });
        const b = await core.initProducer({ transactionalId: null, transactionTimeoutMs: -1, producerId: -1, producerEpoch: -1 });
        expect(a.producerEpoch).toBe(0);
        expect(b.producerId).not.toBe(a.producerId);
        await expect(
          core.initProducer({ transactionalId: uniqueName('txn'), transactionTimeoutMs: -1, producerId: -1, producerEpoch: -1 }),
        ).rejects.toMatchObject({ code: 'invalid_transaction_timeout' });
      });

      it('keeps producer windows across a restart: a resend still answers the original offset', async ({ skip }) => {
        if (!fx.reopen) return skip('the engine keeps nothing across a restart');
        const { q, producerId, producerEpoch } = await producerQueue();
        const records = recordBatch(['a', 'b'], { producerId, producerEpoch, baseSequence: 0 });
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['pre'], {}) }] });
        const first = await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        core = await fx.reopen();
        const resend = await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        expect(resend.partitions[0]).toMatchObject({ duplicate: true, baseOffset: first.partitions[0]!.baseOffset });
        const next = await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['c'], { producerId, producerEpoch, baseSequence: 2 }) }] });
        expect(next.partitions[0]).toMatchObject({ error: null, baseOffset: 3 });
      });
    });

    // ─── The log ─────────────────────────────────────────────────────────────

    describe('log', () => {
      it("leaves a caller's records untouched unless they are handed over, and stores the same either way", async () => {
        const q = await newQueue();
        const kept = Buffer.concat([recordBatch(['a', 'b']), recordBatch(['c'])]);
        const before = Buffer.from(kept);
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['x']) }] });
        const first = await core.append({ partitions: [{ queue: q, partition: 0, records: kept }] });
        expect(first.partitions[0]!.baseOffset).toBe(1);
        expect(kept.equals(before)).toBe(true);
        // Handed over (as the gateway's Produce does): the batches may be kept where they lie.
        const handed = Buffer.concat([recordBatch(['d', 'e']), recordBatch(['f'])]);
        const second = await core.append({ partitions: [{ queue: q, partition: 0, records: handed }], recordsHandedOver: true });
        expect(second.partitions[0]!.baseOffset).toBe(4);
        // The same caller Buffer appended twice without handing it over gives two independent copies.
        await core.append({ partitions: [{ queue: q, partition: 0, records: kept }] });
        expect(await readAll(core, q)).toEqual(
          ['x', 'a', 'b', 'c', 'd', 'e', 'f', 'a', 'b', 'c'].map((value, offset) => ({ offset, value })),
        );
        await expectCoreError(
          core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['y']) }], recordsHandedOver: 'yes' as never }),
          'invalid_argument',
          /recordsHandedOver/,
        );
        expect(await highWatermark(core, q)).toBe(10);
      });

      it('gives eight concurrent appenders contiguous offsets, none lost, none doubled', async () => {
        const q = await newQueue();
        const appenders = 8;
        const perAppender = 25;
        const results = await Promise.all(
          Array.from({ length: appenders }, async (_, a) => {
            const taken: { baseOffset: number; count: number }[] = [];
            for (let i = 0; i < perAppender; i++) {
              const count = 1 + ((a + i) % 3);
              const values = Array.from({ length: count }, (_, r) => `${a}-${i}-${r}`);
              const res = await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(values) }] });
              expect(res.partitions[0]!.error).toBeNull();
              taken.push({ baseOffset: res.partitions[0]!.baseOffset, count });
            }
            return taken;
          }),
        );
        const ranges = results.flat().sort((x, y) => x.baseOffset - y.baseOffset);
        let next = 0;
        for (const r of ranges) {
          expect(r.baseOffset).toBe(next);
          next += r.count;
        }
        const records = await readAll(core, q);
        expect(records.map((r) => r.offset)).toEqual(Array.from({ length: next }, (_, i) => i));
        expect(new Set(records.map((r) => r.value)).size).toBe(next);
        expect(await highWatermark(core, q)).toBe(next);
      });

      it('appends to several partitions in one call and reports each', async () => {
        const q = await newQueue({}, 3);
        const res = await core.append({
          partitions: [
            { queue: q, partition: 0, records: recordBatch(['a']) },
            { queue: q, partition: 2, records: recordBatch(['b', 'c']) },
            { queue: q, partition: 7, records: recordBatch(['lost']) },
            { queue: uniqueName('missing'), partition: 0, records: recordBatch(['lost']) },
          ],
        });
        expect(res.partitions.map((p) => [p.partition, p.error, p.baseOffset])).toEqual([
          [0, null, 0],
          [2, null, 0],
          [7, 'unknown_partition', -1],
          [0, 'unknown_queue', -1],
        ]);
        expect((await readAll(core, q, 2)).map((r) => r.value)).toEqual(['b', 'c']);
      });

      it('stores batches verbatim with only baseOffset and the partition leader epoch rewritten', async () => {
        const q = await newQueue();
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['first']) }] });
        const sent = Buffer.from(recordBatch(['x', 'y']));
        sent.writeInt32BE(7, 12); // a producer's stale idea of the leader epoch
        await core.append({ partitions: [{ queue: q, partition: 0, records: Buffer.from(sent) }] });
        const read = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 1, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
        const stored = read.partitions[0]!.batches[0]!;
        expect(stored.readBigInt64BE(0)).toBe(1n);
        expect(stored.readInt32BE(8)).toBe(sent.readInt32BE(8));
        // Stamped with the leader's epoch, 0, as Kafka's leader stamps its own; outside the CRC.
        expect(stored.readInt32BE(12)).toBe(0);
        expect(stored.subarray(16).equals(sent.subarray(16))).toBe(true);
      });

      it('refuses a batch larger than maxMessageBytes and writes nothing', async () => {
        const q = await newQueue({ maxMessageBytes: 200 });
        const res = await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['x'.repeat(300)]) }] });
        expect(res.partitions[0]!.error).toBe('message_too_large');
        expect(await highWatermark(core, q)).toBe(0);
      });

      it('refuses a corrupt batch and writes nothing', async () => {
        const q = await newQueue();
        const records = recordBatch(['x']);
        records.writeUInt8(records.readUInt8(records.length - 1) ^ 0xff, records.length - 1);
        const res = await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        expect(res.partitions[0]!.error).toBe('corrupt_message');
        expect(await highWatermark(core, q)).toBe(0);
      });

      it('refuses a batch whose CRC holds over garbled records with invalid_record, naming the record, and writes nothing', async () => {
        const q = await newQueue();
        const good = recordBatch(['kept']);
        const garbled = recordBatch(['x', 'y']);
        garbled.fill(0xc7, 61);
        garbled.writeUInt32BE(crc32c(garbled.subarray(21)), 17);
        const res = await core.append({ partitions: [{ queue: q, partition: 0, records: good }, { queue: q, partition: 0, records: garbled }] });
        expect(res.partitions[0]!.error).toBeNull();
        expect(res.partitions[1]).toMatchObject({ error: 'invalid_record', recordError: { index: 0, message: expect.stringMatching(/^record 0: /) } });
        expect(await highWatermark(core, q)).toBe(1);
      });

      it('refuses a compressed batch that inflates past the limit with message_too_large, and writes nothing', async () => {
        const q = await newQueue();
        const bomb = buildBatch({ compression: CompressionCodec.Gzip, records: [{ value: Buffer.alloc(20 * 1024 * 1024) }] });
        const res = await core.append({ partitions: [{ queue: q, partition: 0, records: bomb }] });
        expect(res.partitions[0]).toMatchObject({ error: 'message_too_large', errorMessage: expect.stringMatching(/inflation limit for one batch/) });
        expect(await highWatermark(core, q)).toBe(0);
      });

      it("stores the records' largest timestamp as the batch's max timestamp, as Kafka does, so a search by time finds every record", async () => {
        const q = await newQueue();
        const records = buildBatch({ records: [{ value: 'a', timestamp: 1_000 }, { value: 'b', timestamp: 9_000 }], maxTimestamp: 1_000 });
        await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        const read = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
        expect(decodeBatch(read.partitions[0]!.batches[0]!).header.maxTimestamp).toBe(9_000n);
        expect(await core.offsetForTimestamp({ queue: q, partition: 0, timestamp: 5_000, isolation: 'read_uncommitted' })).toMatchObject({ offset: 1, timestamp: 9_000 });
      });

      it('stamps the append time on a LogAppendTime queue', async () => {
        const q = await newQueue({ timestampType: 'LogAppendTime' });
        const res = await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['x'], { timestamp: 1000 }) }] });
        expect(res.partitions[0]!.logAppendTime).toBeGreaterThan(1000);
        const read = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
        const decoded = decodeBatch(read.partitions[0]!.batches[0]!); // the CRC still holds
        expect(Number(decoded.header.maxTimestamp)).toBe(res.partitions[0]!.logAppendTime);
      });

      it('reads from an offset inside a batch, and answers offset_out_of_range past the high watermark', async () => {
        const q = await newQueue();
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['a', 'b', 'c']) }] });
        expect((await readAll(core, q, 0, 1)).map((r) => r.value)).toEqual(['b', 'c']);
        const past = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 4, maxBytes: 1000 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1000, isolation: 'read_uncommitted' });
        expect(past.partitions[0]).toMatchObject({ error: 'offset_out_of_range', highWatermark: 3, batches: [] });
        const atEnd = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 3, maxBytes: 1000 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1000, isolation: 'read_uncommitted' });
        expect(atEnd.partitions[0]).toMatchObject({ error: null, highWatermark: 3, lastStableOffset: 3, batches: [] });
      });

      it('honours byte limits but always returns at least one whole batch', async () => {
        const q = await newQueue({}, 2);
        for (let i = 0; i < 4; i++) {
          await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['x'.repeat(500)]) }, { queue: q, partition: 1, records: recordBatch(['y'.repeat(500)]) }] });
        }
        const size = recordBatch(['x'.repeat(500)]).length;
        const read = (perPartition: number, total: number) =>
          core.read({
            partitions: [0, 1].map((partition) => ({ queue: q, partition, fetchOffset: 0, maxBytes: perPartition })),
            minBytes: 0,
            maxWaitMs: 0,
            maxBytes: total,
            isolation: 'read_uncommitted',
          });
        const tiny = await read(10, 10);
        expect(tiny.partitions[0]!.batches).toHaveLength(1);
        const perPartition = await read(size * 2, 1 << 20);
        expect(perPartition.partitions.map((p) => p.batches.length)).toEqual([2, 2]);
        const total = await read(1 << 20, size * 3);
        expect(total.partitions.map((p) => p.batches.length)).toEqual([3, 0]);
      });

      it('wakes a long-poll when an append arrives', async () => {
        const q = await newQueue();
        const polling = core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 1, maxWaitMs: 20_000, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
        await new Promise((r) => setTimeout(r, 20));
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['wake']) }] });
        const res = await polling;
        expect(recordsOf(res.partitions[0]!.batches).map((r) => r.value)).toEqual(['wake']);
      });

      it('answers an unsatisfied long-poll empty when maxWait passes', async () => {
        const q = await newQueue();
        const res = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 1, maxWaitMs: 30, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
        expect(res.partitions[0]).toMatchObject({ error: null, batches: [], highWatermark: 0 });
      });

      it('answers a long-poll at once when it is aborted, and pending polls when the core closes', async () => {
        const q = await newQueue();
        const controller = new AbortController();
        const request = { partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 1, maxWaitMs: 60_000, maxBytes: 1 << 20, isolation: 'read_uncommitted' as const };
        const aborted = core.read(request, { signal: controller.signal });
        controller.abort();
        expect((await aborted).partitions[0]!.batches).toEqual([]);
        const popping = core.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 60_000 });
        const reading = core.read(request);
        await core.close();
        expect((await reading).partitions[0]!.batches).toEqual([]);
        expect((await popping).messages).toEqual([]);
      });

      it('refuses every kind of call with closed once the core is closed, reads and writes alike', async () => {
        const q = await newQueue();
        await core.close();
        const calls: [string, () => Promise<unknown>][] = [
          ['listQueues', () => core.listQueues()],
          ['createQueue', () => core.createQueue({ name: uniqueName('q'), partitions: 1 })],
          ['append', () => core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['late']) }] })],
          ['commitOffsets', () => core.commitOffsets({ group: 'g', offsets: [{ queue: q, partition: 0, offset: 1, leaderEpoch: -1, metadata: null }] })],
          ['kvPut', () => core.kvPut({ ns: 'n', key: 'k', value: 1 })],
          ['push', () => core.push({ items: [{ queue: q, payload: 1 }] })],
          ['describeTransactions', () => core.describeTransactions({ transactionalIds: ['t'] })],
          ['listAcls', () => core.listAcls()],
        ];
        for (const [name, call] of calls) {
          const error = await call().then(
            () => null,
            (e: unknown) => e as { code?: string },
          );
          expect(error?.code, name).toBe('closed');
        }
      });

      it('finds offsets by timestamp, including latest (-1), earliest (-2) and max (-3)', async () => {
        const q = await newQueue();
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['a', 'b'], { timestamp: 1_000 }) }] });
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['c'], { timestamp: 5_000 }) }] });
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['d'], { timestamp: 3_000 }) }] });
        const at = async (timestamp: number) => (await core.offsetForTimestamp({ queue: q, partition: 0, timestamp, isolation: 'read_uncommitted' })).offset;
        expect(await at(-1)).toBe(4);
        expect(await at(-2)).toBe(0);
        expect(await at(-3)).toBe(2);
        expect(await at(500)).toBe(0);
        expect(await at(4_000)).toBe(2);
        expect(await at(9_000)).toBe(-1);
      });

      it('finds the first record at or after a time inside a batch, and the record holding the max timestamp', async () => {
        const q = await newQueue();
        const times = [1_000, 2_000, 7_000, 3_000, 4_000];
        const batch = buildBatch({ records: times.map((timestamp, i) => ({ key: null, value: `r${i}`, timestamp })), producerId: -1, producerEpoch: -1, baseSequence: -1 });
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['before'], { timestamp: 500 }) }] });
        await core.append({ partitions: [{ queue: q, partition: 0, records: batch }] });
        const at = (timestamp: number) => core.offsetForTimestamp({ queue: q, partition: 0, timestamp, isolation: 'read_uncommitted' });
        expect(await at(2_500)).toMatchObject({ offset: 3, timestamp: 7_000 });
        expect(await at(1_500)).toMatchObject({ offset: 2, timestamp: 2_000 });
        expect(await at(-3)).toMatchObject({ offset: 3, timestamp: 7_000 });
        await core.deleteRecords({ queue: q, partition: 0, beforeOffset: 4 });
        expect(await at(1_500)).toMatchObject({ offset: 4, timestamp: 3_000 });
      });

      it('deletes records before an offset: the log start moves and earlier reads are out of range', async () => {
        const q = await newQueue();
        for (const v of ['a', 'b', 'c', 'd']) await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch([v]) }] });
        expect((await core.deleteRecords({ queue: q, partition: 0, beforeOffset: 2 })).lowWatermark).toBe(2);
        const offsets = (await core.offsets({ partitions: [{ queue: q, partition: 0 }] })).partitions[0]!;
        expect(offsets).toMatchObject({ logStartOffset: 2, highWatermark: 4 });
        expect((await readAll(core, q, 0, 2)).map((r) => r.value)).toEqual(['c', 'd']);
        const before = await core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: 1, maxBytes: 1000 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1000, isolation: 'read_uncommitted' });
        expect(before.partitions[0]!.error).toBe('offset_out_of_range');
        await expectCoreError(core.deleteRecords({ queue: q, partition: 0, beforeOffset: 9 }), 'invalid_argument');
        expect((await core.deleteRecords({ queue: q, partition: 0, beforeOffset: -1 })).lowWatermark).toBe(4);
      });

      it('sizes a partition by the bytes of its stored batches, less what deleting records dropped, and names what is unknown', async () => {
        const q = await newQueue({}, 2);
        const batches = [recordBatch(['first record']), recordBatch(['second', 'and third'])];
        for (const records of batches) await core.append({ partitions: [{ queue: q, partition: 0, records }] });
        const sizes = async () => (await core.partitionSizes({ partitions: [{ queue: q, partition: 0 }, { queue: q, partition: 1 }, { queue: q, partition: 7 }, { queue: `${q}-absent`, partition: 0 }] })).partitions;
        expect(await sizes()).toEqual([
          { queue: q, partition: 0, error: null, bytes: batches[0]!.length + batches[1]!.length },
          { queue: q, partition: 1, error: null, bytes: 0 },
          { queue: q, partition: 7, error: 'unknown_partition', bytes: -1 },
          { queue: `${q}-absent`, partition: 0, error: 'unknown_queue', bytes: -1 },
        ]);
        // The first batch lies wholly before the new log start, so it is no longer stored.
        await core.deleteRecords({ queue: q, partition: 0, beforeOffset: 1 });
        expect((await sizes())[0]!.bytes).toBe(batches[1]!.length);
      });

      it('applies retention by time and by bytes', async ({ skip }) => {
        if (!fx.advanceClock || !fx.runMaintenance) return skip('the fixture cannot move the clock or run the reaper');
        const byTime = await newQueue({ retentionMs: 60_000 });
        const size = recordBatch(['z'.repeat(100)]).length;
        const byBytes = await newQueue({ retentionMs: -1, retentionBytes: size * 2 });
        for (let i = 0; i < 3; i++) {
          await core.append({ partitions: [{ queue: byTime, partition: 0, records: recordBatch([`t${i}`]) }, { queue: byBytes, partition: 0, records: recordBatch(['z'.repeat(100)]) }] });
        }
        await fx.advanceClock(30_000);
        await core.append({ partitions: [{ queue: byTime, partition: 0, records: recordBatch(['recent']) }] });
        await fx.advanceClock(30_001);
        await fx.runMaintenance();
        expect((await core.offsets({ partitions: [{ queue: byTime, partition: 0 }] })).partitions[0]).toMatchObject({ logStartOffset: 3, highWatermark: 4 });
        expect((await readAll(core, byTime, 0, 3)).map((r) => r.value)).toEqual(['recent']);
        expect((await core.offsets({ partitions: [{ queue: byBytes, partition: 0 }] })).partitions[0]).toMatchObject({ logStartOffset: 1, highWatermark: 3 });
      });
    });

    // ─── Queues ──────────────────────────────────────────────────────────────

    describe('queues', () => {
      it('creates, lists, describes, alters, grows and deletes a queue', async () => {
        const q = await newQueue({ retentionMs: 1000 }, 2);
        const info = (await core.describeQueue({ name: q }))!;
        expect(info).toMatchObject({ name: q, config: { retentionMs: 1000, dedupWindowSeconds: 3600 } });
        expect(info.id).toMatch(/^[0-9a-f-]{36}$/);
        expect((await core.listQueues()).map((x) => x.name)).toContain(q);
        expect((await core.alterQueue({ name: q, config: { dedupWindowSeconds: 5 } })).config).toMatchObject({ retentionMs: 1000, dedupWindowSeconds: 5 });
        expect((await core.addPartitions({ name: q, totalCount: 4 })).partitions.map((p) => p.name)).toEqual(['0', '1', '2', '3']);
        await expectCoreError(core.createQueue({ name: q, partitions: 1 }), 'queue_exists');
        await core.deleteQueue({ name: q });
        expect(await core.describeQueue({ name: q })).toBeNull();
        await expectCoreError(core.deleteQueue({ name: q }), 'unknown_queue');
      });

      it('sets no per-message limit on a queue made natively (as Queen), and keeps Kafka\'s on a Kafka topic', async () => {
        const payload = { blob: 'x'.repeat(2_100_000) };
        const native = await newQueue();
        const [stored] = await push([{ queue: native, payload }]);
        expect(stored!.status).toBe('queued');
        const popped = await core.pop({ queue: native, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 });
        expect(popped.messages.map((m) => (m.payload as { blob: string }).blob.length)).toEqual([2_100_000]);
        const topic = await newQueue({ fixedPartitionCount: true });
        expect((await core.describeQueue({ name: topic }))!.config.maxMessageBytes).toBe(1_048_588);
        await expectCoreError(core.push({ items: [{ queue: topic, payload }] }), 'invalid_argument');
        // A limit a native queue names still holds.
        const capped = await newQueue({ maxMessageBytes: 100 });
        await expectCoreError(core.push({ items: [{ queue: capped, payload }] }), 'invalid_argument');
      });

      it('gives a partition pushed natively under a name the next free index, visible to Kafka readers', async () => {
        const q = await newQueue({}, 2);
        const [r] = await push([{ queue: q, partition: 'customer-42', payload: { hello: 'kafka' } }]);
        expect(r!.partitionIndex).toBe(2);
        const info = (await core.describeQueue({ name: q }))!;
        expect(info.partitions).toContainEqual({ index: 2, name: 'customer-42' });
        expect((await readAll(core, q, 2)).map((x) => JSON.parse(x.value))).toEqual([{ hello: 'kafka' }]);
      });
    });

    // ─── Consumer-group offsets ──────────────────────────────────────────────

    describe('group offsets', () => {
      it('commits, fetches, lists and deletes offsets', async () => {
        const q = await newQueue({}, 2);
        const group = uniqueName('group');
        await core.commitOffsets({ group, offsets: [{ queue: q, partition: 0, offset: 5, leaderEpoch: -1, metadata: 'm' }] });
        const fetched = await core.fetchOffsets({ group, partitions: [{ queue: q, partition: 0 }, { queue: q, partition: 1 }] });
        expect(fetched.offsets).toEqual([
          { queue: q, partition: 0, offset: 5, leaderEpoch: -1, metadata: 'm' },
          { queue: q, partition: 1, offset: -1, leaderEpoch: -1, metadata: null },
        ]);
        expect((await core.fetchOffsets({ group, partitions: null })).offsets.map((o) => o.offset)).toEqual([5]);
        expect((await core.listGroups()).groups.map((g) => g.group)).toContain(group);
        await core.deleteOffsets({ group, partitions: [{ queue: q, partition: 0 }] });
        expect((await core.fetchOffsets({ group, partitions: null })).offsets).toEqual([]);
      });

      it('keeps the logical offsets -1 and -2 a tool commits to reset a group, as Kafka does', async () => {
        const q = await newQueue({}, 2);
        const group = uniqueName('group');
        await core.commitOffsets({
          group,
          offsets: [
            { queue: q, partition: 0, offset: -2, leaderEpoch: -1, metadata: null },
            { queue: q, partition: 1, offset: -1, leaderEpoch: -1, metadata: null },
          ],
        });
        const fetched = await core.fetchOffsets({ group, partitions: null });
        expect(fetched.offsets.map((o) => [o.partition, o.offset]).sort()).toEqual([
          [0, -2],
          [1, -1],
        ]);
        await expectCoreError(core.commitOffsets({ group, offsets: [{ queue: q, partition: 0, offset: 1.5, leaderEpoch: -1, metadata: null }] }), 'invalid_argument', /offset/);
      });

      it('commits nothing when one partition of the commit is unknown', async () => {
        const q = await newQueue();
        const group = uniqueName('group');
        await expectCoreError(
          core.commitOffsets({ group, offsets: [{ queue: q, partition: 0, offset: 1, leaderEpoch: -1, metadata: null }, { queue: q, partition: 3, offset: 1, leaderEpoch: -1, metadata: null }] }),
          'unknown_partition',
        );
        expect((await core.fetchOffsets({ group, partitions: null })).offsets).toEqual([]);
      });
    });

    // ─── KV ──────────────────────────────────────────────────────────────────

    describe('kv', () => {
      it('puts, gets and versions entries; an optimistic update compares the version', async () => {
        const ns = uniqueName('ns');
        expect((await core.kvPut({ ns, key: 'k', value: { a: 1 } })).entry).toMatchObject({ value: { a: 1 }, version: 1, expiresAt: null });
        expect((await core.kvPut({ ns, key: 'k', value: 2, expectedVersion: 5 })).applied).toBe(false);
        expect((await core.kvPut({ ns, key: 'k', value: 2, expectedVersion: 1 })).entry).toMatchObject({ value: 2, version: 2 });
        expect((await core.kvPutIfAbsent({ ns, key: 'k', value: 3 })).applied).toBe(false);
        expect((await core.kvGet({ ns, key: 'k' }))!.value).toBe(2);
        expect((await core.kvIncr({ ns, key: 'n', by: 2 })).value).toBe(2);
        expect((await core.kvIncr({ ns, key: 'n', by: 3 })).value).toBe(5);
        await core.kvPut({ ns, key: 'k2', value: 'b' });
        expect((await core.kvGetMany({ ns, keys: ['k', 'missing', 'k2'] })).map((e) => e?.value ?? null)).toEqual([2, null, 'b']);
        expect((await core.kvGetPrefix({ ns, prefix: 'k' })).map((e) => e.key)).toEqual(['k', 'k2']);
        expect((await core.kvGetPrefix({ ns, prefix: 'k', limit: 1 })).map((e) => e.key)).toEqual(['k']);
        expect(await core.kvDelete({ ns, key: 'k' })).toEqual({ deleted: true });
        expect(await core.kvDelete({ ns, key: 'k' })).toEqual({ deleted: false });
        await expectCoreError(core.kvIncr({ ns, key: 'k2', by: 1 }), 'invalid_argument', /not a number/);
      });

      it('expires an entry when its TTL passes, and a new write starts again at version 1', async ({ skip }) => {
        if (!fx.advanceClock) return skip('the fixture cannot move the clock');
        const ns = uniqueName('ns');
        await core.kvPut({ ns, key: 'k', value: 1, lifetime: { ttlMs: 1000 } });
        await core.kvPut({ ns, key: 'k', value: 2, lifetime: { ttlMs: 1000 } });
        await fx.advanceClock(999);
        expect((await core.kvGet({ ns, key: 'k' }))!.version).toBe(2);
        await fx.advanceClock(2);
        expect(await core.kvGet({ ns, key: 'k' })).toBeNull();
        expect(await core.kvGetPrefix({ ns, prefix: '' })).toEqual([]);
        expect((await core.kvPutIfAbsent({ ns, key: 'k', value: 3 })).entry).toMatchObject({ value: 3, version: 1 });
      });
    });

    // ─── Native consume ──────────────────────────────────────────────────────

    describe('native consume', () => {
      it('pops under a lease that keeps other workers off the partition until acked', async () => {
        const q = await newQueue();
        await push([{ queue: q, payload: 'a' }, { queue: q, payload: 'b' }]);
        const first = await core.pop({ queue: q, consumerGroup: 'g', owner: 'w1', batch: 1, waitMs: 0 });
        expect(first.messages.map((m) => m.payload)).toEqual(['a']);
        expect(first.lease).toMatchObject({ queue: q, partition: 'Default', consumerGroup: 'g', owner: 'w1' });
        expect((await core.pop({ queue: q, consumerGroup: 'g', owner: 'w2', batch: 1, waitMs: 0 })).messages).toEqual([]);
        // Another group has its own position and lease.
        expect((await core.pop({ queue: q, consumerGroup: 'other', owner: 'w2', batch: 5, waitMs: 0 })).messages).toHaveLength(2);
        const m = first.messages[0]!;
        expect(await core.ack({ queue: q, partition: m.partition, consumerGroup: 'g', offset: m.offset, status: 'completed', leaseId: first.lease!.id })).toEqual({ acked: true });
        expect((await core.pop({ queue: q, consumerGroup: 'g', owner: 'w2', batch: 1, waitMs: 0 })).messages.map((x) => x.payload)).toEqual(['b']);
      });

      it('frees the partition when a lease expires, and delivers its messages again', async ({ skip }) => {
        if (!fx.advanceClock) return skip('the fixture cannot move the clock');
        const q = await newQueue({ leaseMs: 1000 });
        await push([{ queue: q, payload: 'job' }]);
        const held = await core.pop({ queue: q, consumerGroup: 'g', owner: 'dies', batch: 1, waitMs: 0 });
        const renewed = await core.renewLease({ leaseId: held.lease!.id, extendMs: 2000 });
        expect(renewed.deadline).toBeGreaterThan(held.lease!.deadline);
        await fx.advanceClock(1500);
        expect((await core.pop({ queue: q, consumerGroup: 'g', owner: 'w2', batch: 1, waitMs: 0 })).messages).toEqual([]);
        await fx.advanceClock(600);
        const again = await core.pop({ queue: q, consumerGroup: 'g', owner: 'w2', batch: 1, waitMs: 0 });
        expect(again.messages.map((m) => m.messageId)).toEqual(held.messages.map((m) => m.messageId));
        await expectCoreError(core.renewLease({ leaseId: held.lease!.id, extendMs: 1000 }), 'unknown_lease');
        await expectCoreError(core.ack({ queue: q, partition: 'Default', consumerGroup: 'g', offset: 0, status: 'completed', leaseId: held.lease!.id }), 'unknown_lease');
      });

      it('hands out at most 4 MiB of record bytes per pop, and always at least one message', async () => {
        const q = await newQueue({ maxMessageBytes: 8 * 1024 * 1024 });
        const big = (tag: string) => buildBatch({ records: [{ key: tag, value: Buffer.alloc(3 * 1024 * 1024, tag) }] });
        for (const tag of ['a', 'b', 'c']) await core.append({ partitions: [{ queue: q, partition: 0, records: big(tag) }] });
        const first = await core.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 100, waitMs: 0 });
        expect(first.messages.map((m) => m.key?.toString())).toEqual(['a', 'b']);
        for (const m of first.messages) await core.ack({ queue: q, partition: m.partition, consumerGroup: 'g', offset: m.offset, status: 'completed', leaseId: first.lease!.id });
        const second = await core.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 100, waitMs: 0 });
        expect(second.messages.map((m) => m.key?.toString())).toEqual(['c']);
      });

      it('wakes a waiting pop when a message is pushed', async () => {
        const q = await newQueue();
        const waiting = core.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 20_000 });
        await new Promise((r) => setTimeout(r, 20));
        await push([{ queue: q, partition: 'later', payload: 'hi' }]);
        expect((await waiting).messages.map((m) => m.payload)).toEqual(['hi']);
      });

      it('pops a record a Kafka producer wrote, with a message id derived from its position', async () => {
        const q = await newQueue();
        await core.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['{"from":"kafka"}', 'plain text']) }] });
        const a = await core.pop({ queue: q, partition: '0', consumerGroup: 'g1', owner: 'w', batch: 2, waitMs: 0 });
        const b = await core.pop({ queue: q, partition: '0', consumerGroup: 'g2', owner: 'w', batch: 2, waitMs: 0 });
        expect(a.messages.map((m) => m.payload)).toEqual([{ from: 'kafka' }, 'plain text']);
        expect(a.messages.map((m) => m.messageId)).toEqual(b.messages.map((m) => m.messageId));
        expect(a.messages[0]!.messageId).not.toBe(a.messages[1]!.messageId);
        expect(a.messages[0]!.transactionId).toBe(a.messages[0]!.messageId);
      });
    });

    // ─── Bad input ───────────────────────────────────────────────────────────

    describe('bad input', () => {
      it('refuses invalid names with invalid_name and creates nothing', async () => {
        for (const name of ['', '.', '..', 'has space', 'slash/no', 'x'.repeat(250), 'ünïcode']) {
          await expectCoreError(core.createQueue({ name, partitions: 1 }), 'invalid_name');
        }
        expect((await core.listQueues()).map((q) => q.name)).not.toContain('has space');
        expect((await core.createQueue({ name: uniqueName('ok.Name_') + '-' + 'x'.repeat(200), partitions: 1 })).name.length).toBeLessThanOrEqual(249);
        await expectCoreError(core.kvPut({ ns: 'bad ns', key: 'k', value: 1 }), 'invalid_name');
        await expectCoreError(core.kvPut({ ns: 'ns', key: '', value: 1 }), 'invalid_name');
        await expectCoreError(core.commitOffsets({ group: '', offsets: [] }), 'invalid_name');
      });

      it('refuses negative counts and offsets with invalid_argument', async () => {
        const q = await newQueue();
        await expectCoreError(core.createQueue({ name: uniqueName('neg'), partitions: -1 }), 'invalid_argument', /partitions/);
        await expectCoreError(core.createQueue({ name: uniqueName('zero'), partitions: 0 }), 'invalid_argument');
        await expectCoreError(core.read({ partitions: [{ queue: q, partition: 0, fetchOffset: -5, maxBytes: 100 }], minBytes: 0, maxWaitMs: 0, maxBytes: 100, isolation: 'read_uncommitted' }), 'invalid_argument', /fetchOffset/);
        await expectCoreError(core.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 0, waitMs: 0 }), 'invalid_argument', /batch/);
        await expectCoreError(core.addPartitions({ name: q, totalCount: 1 }), 'invalid_argument');
        await expectCoreError(core.kvPut({ ns: 'ns', key: 'k', value: 1, lifetime: { ttlMs: -1 } }), 'invalid_argument');
        await expectCoreError(core.createQueue({ name: uniqueName('cfg'), partitions: 1, config: { retentionMs: -7 } }), 'invalid_config');
        expect(await core.kvGet({ ns: 'ns', key: 'k' })).toBeNull();
      });

      it('refuses unknown queues and partitions with typed errors and writes nothing', async () => {
        const q = await newQueue();
        const missing = uniqueName('missing');
        await expectCoreError(push([{ queue: q, payload: 'would be first' }, { queue: missing, payload: 'x' }]), 'unknown_queue', new RegExp(missing));
        expect(await storedIn(q)).toBe(0);
        await expectCoreError(core.offsetForTimestamp({ queue: q, partition: 5, timestamp: -1, isolation: 'read_uncommitted' }), 'unknown_partition');
        await expectCoreError(core.pop({ queue: missing, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 }), 'unknown_queue');
        await expectCoreError(core.pop({ queue: q, partition: 'nope', consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 }), 'unknown_partition');
        const read = await core.read({ partitions: [{ queue: missing, partition: 0, fetchOffset: 0, maxBytes: 100 }], minBytes: 1, maxWaitMs: 10_000, maxBytes: 100, isolation: 'read_uncommitted' });
        expect(read.partitions[0]!.error).toBe('unknown_queue');
        const tx = core.transaction({ operations: [{ op: 'kv.put', ns: 'tx', key: 'k', value: 1 }, { op: 'push', queue: missing, payload: 1 }] });
        await expectCoreError(tx, 'unknown_queue');
        expect(await core.kvGet({ ns: 'tx', key: 'k' })).toBeNull();
      });

      it('refuses a payload that is not JSON and writes nothing', async () => {
        const q = await newQueue();
        await expectCoreError(push([{ queue: q, payload: 1 }, { queue: q, payload: undefined }]), 'invalid_argument', /payload/);
        expect(await storedIn(q)).toBe(0);
      });
    });

    // ─── ACLs and client quotas ──────────────────────────────────────────────

    describe('acls and quotas', () => {
      const binding = (resourceName: string, over: Partial<AclBinding> = {}): AclBinding => ({
        resourceType: 'TOPIC', resourceName, patternType: 'LITERAL', principal: 'User:alice', host: '*', operation: 'READ', permission: 'ALLOW', ...over,
      });
      const ofTopic = async (prefix: string) => (await core.listAcls()).bindings.filter((b) => b.resourceName.startsWith(prefix));

      it('stores bindings once, lists them, and deletes what each filter matches', async () => {
        const t = uniqueName('acl');
        await core.createAcls({ bindings: [binding(t), binding(t), binding(t, { operation: 'WRITE' }), binding(t, { patternType: 'PREFIXED', principal: 'User:bob' })] });
        expect(await ofTopic(t)).toHaveLength(3);
        const { results } = await core.deleteAcls({
          filters: [
            { resourceType: 'TOPIC', resourceName: t, patternType: 'LITERAL', principal: 'User:alice', host: null, operation: 'ANY', permission: 'ANY' },
            { resourceType: 'ANY', resourceName: t + '-x', patternType: 'MATCH', principal: null, host: null, operation: 'ANY', permission: 'ALLOW' },
          ],
        });
        expect(results[0]!.deleted.map((b) => b.operation).sort()).toEqual(['READ', 'WRITE']);
        // MATCH: the prefixed binding applies to "<t>-x".
        expect(results[1]!.deleted).toEqual([binding(t, { patternType: 'PREFIXED', principal: 'User:bob' })]);
        expect(await ofTopic(t)).toEqual([]);
      });

      it('refuses a malformed binding whole, saying which field', async () => {
        const t = uniqueName('acl');
        await expectCoreError(core.createAcls({ bindings: [binding(t), binding(t, { operation: 'READ_ALL' as AclBinding['operation'] })] }), 'invalid_argument', /bindings\[1\]\.operation/);
        await expectCoreError(core.createAcls({ bindings: [binding(t, { principal: 'alice' })] }), 'invalid_argument', /User:alice/);
        expect(await ofTopic(t)).toEqual([]);
      });

      it('sets, replaces and removes client quota values per entity', async () => {
        const user = uniqueName('u');
        const mine = async () => (await core.listClientQuotas()).entries.filter((e) => e.entity.user === user);
        await core.alterClientQuotas({ alterations: [
          { entity: { user }, set: { producer_byte_rate: 1024, consumer_byte_rate: 2048 }, remove: [] },
          { entity: { user, clientId: 'app' }, set: { request_percentage: 50 }, remove: [] },
        ] });
        expect(await mine()).toHaveLength(2);
        await core.alterClientQuotas({ alterations: [{ entity: { user }, set: { producer_byte_rate: 4096 }, remove: ['consumer_byte_rate'] }] });
        expect((await mine()).find((e) => e.entity.clientId === undefined)!.values).toEqual({ producer_byte_rate: 4096 });
        await core.alterClientQuotas({ alterations: [{ entity: { user, clientId: 'app' }, set: {}, remove: ['request_percentage'] }] });
        expect(await mine()).toHaveLength(1);
        await expectCoreError(core.alterClientQuotas({ alterations: [{ entity: { user }, set: { producer_byte_rate: -1 }, remove: [] }] }), 'invalid_argument', /above 0/);
      });
    });

    // ─── Durability ──────────────────────────────────────────────────────────

    describe('durability', () => {
      it('keeps batches, offsets, group offsets, KV, once markers and the dedup index across close and reopen', async ({ skip }) => {
        if (!fx.reopen) return skip('the engine keeps nothing across a restart');
        const q = await newQueue({}, 2);
        const group = uniqueName('group');
        const ns = uniqueName('ns');
        await core.append({ partitions: [{ queue: q, partition: 1, records: recordBatch(['a', 'b']) }] });
        const [pushed] = await push([{ queue: q, partition: '0', transactionId: 'p', payload: 'native' }]);
        await core.commitOffsets({ group, offsets: [{ queue: q, partition: 1, offset: 1, leaderEpoch: 3, metadata: 'meta' }] });
        await core.kvPut({ ns, key: 'k', value: { kept: true } });
        await core.once({ ns, key: 'step', lifetime: { forever: true } });
        await core.deleteRecords({ queue: q, partition: 1, beforeOffset: 1 });
        core = await fx.reopen();
        expect((await core.describeQueue({ name: q }))!.partitions).toHaveLength(2);
        expect((await readAll(core, q, 1, 1)).map((r) => r.value)).toEqual(['b']);
        expect((await core.offsets({ partitions: [{ queue: q, partition: 1 }] })).partitions[0]).toMatchObject({ logStartOffset: 1, highWatermark: 2 });
        expect((await core.fetchOffsets({ group, partitions: null })).offsets).toEqual([{ queue: q, partition: 1, offset: 1, leaderEpoch: 3, metadata: 'meta' }]);
        expect((await core.kvGet({ ns, key: 'k' }))!.value).toEqual({ kept: true });
        expect(await core.once({ ns, key: 'step', lifetime: { forever: true } })).toEqual({ won: false });
        expect((await push([{ queue: q, partition: '0', transactionId: 'p', payload: 'native' }]))[0]).toMatchObject({ status: 'duplicate', messageId: pushed!.messageId });
      });
    });

    // ─── SCRAM credentials (issue 19) ───────────────────────────────────────

    describe('SCRAM credentials', () => {
      const key = (bytes: number, fill: number) => Buffer.alloc(bytes, fill);
      const credential = (user: string, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', fill: number, iterations = 4096) => {
        const bytes = mechanism === 'SCRAM-SHA-256' ? 32 : 64;
        return { user, mechanism, iterations, salt: key(16, fill), storedKey: key(bytes, fill + 1), serverKey: key(bytes, fill + 2) };
      };

      it('keeps salt, iterations and keys per user and mechanism; describe names mechanisms and counts only', async () => {
        const user = uniqueName('alice');
        const result = await core.alterScramCredentials({ deletions: [], upsertions: [credential(user, 'SCRAM-SHA-256', 1), credential(user, 'SCRAM-SHA-512', 5, 8192)] });
        expect(result.results.map((r) => r.error)).toEqual([null, null]);
        const described = await core.describeScramCredentials({ users: [user] });
        expect(described.users).toHaveLength(1);
        expect(described.users[0]!.credentials.sort((a, b) => a.mechanism.localeCompare(b.mechanism))).toEqual([
          { mechanism: 'SCRAM-SHA-256', iterations: 4096 },
          { mechanism: 'SCRAM-SHA-512', iterations: 8192 },
        ]);
        const stored = await core.scramCredential({ user, mechanism: 'SCRAM-SHA-512' });
        expect(stored).toMatchObject({ user, mechanism: 'SCRAM-SHA-512', iterations: 8192 });
        expect(Buffer.from(stored!.storedKey).equals(key(64, 6))).toBe(true);
        expect(Buffer.from(stored!.serverKey).equals(key(64, 7))).toBe(true);
        expect(Buffer.from(stored!.salt).equals(key(16, 5))).toBe(true);
        expect((await core.describeScramCredentials({ users: null })).users.map((u) => u.user)).toContain(user);
      });

      it('replaces a credential on upsert, deletes one mechanism and leaves the other, and answers not_found for what is not there', async () => {
        const user = uniqueName('bob');
        await core.alterScramCredentials({ deletions: [], upsertions: [credential(user, 'SCRAM-SHA-256', 1), credential(user, 'SCRAM-SHA-512', 5)] });
        await core.alterScramCredentials({ deletions: [], upsertions: [credential(user, 'SCRAM-SHA-256', 9, 5000)] });
        expect((await core.scramCredential({ user, mechanism: 'SCRAM-SHA-256' }))!.iterations).toBe(5000);
        const result = await core.alterScramCredentials({ deletions: [{ user, mechanism: 'SCRAM-SHA-512' }, { user: uniqueName('nobody'), mechanism: 'SCRAM-SHA-256' }], upsertions: [] });
        expect(result.results.map((r) => r.error)).toEqual([null, 'not_found']);
        expect(await core.scramCredential({ user, mechanism: 'SCRAM-SHA-512' })).toBeNull();
        expect((await core.describeScramCredentials({ users: [user] })).users[0]!.credentials).toEqual([{ mechanism: 'SCRAM-SHA-256', iterations: 5000 }]);
        const stranger = uniqueName('stranger');
        expect((await core.describeScramCredentials({ users: [stranger] })).users).toEqual([{ user: stranger, credentials: [] }]);
      });

      it('refuses iteration counts outside 4096-16384 and keys of the wrong size, storing nothing', async () => {
        const user = uniqueName('carol');
        await expect(core.alterScramCredentials({ deletions: [], upsertions: [credential(user, 'SCRAM-SHA-256', 1, 1000)] })).rejects.toMatchObject({ code: 'invalid_argument' });
        await expect(core.alterScramCredentials({ deletions: [], upsertions: [{ ...credential(user, 'SCRAM-SHA-512', 1), storedKey: key(32, 1) }] })).rejects.toMatchObject({ code: 'invalid_argument' });
        expect(await core.scramCredential({ user, mechanism: 'SCRAM-SHA-256' })).toBeNull();
      });

      it('survives a restart where the engine is durable', async () => {
        if (!fx.reopen) return;
        const user = uniqueName('dave');
        await core.alterScramCredentials({ deletions: [], upsertions: [credential(user, 'SCRAM-SHA-256', 3)] });
        core = await fx.reopen();
        expect((await core.scramCredential({ user, mechanism: 'SCRAM-SHA-256' }))?.iterations).toBe(4096);
      });
    });

    describeConsumerGroups({ core: () => core, newQueue: (partitions) => newQueue({}, partitions) });
    describeNative({ core: () => core, newQueue: () => newQueue(), uniqueName });
    describeCopies({ core: () => core, newQueue: (partitions) => newQueue({}, partitions), reopen: () => (fx.reopen ? fx.reopen().then((c) => (core = c)) : null) });
    describeStreams({ core: () => core, newQueue: () => newQueue(), uniqueName, reopen: () => (fx.reopen ? fx.reopen().then((c) => (core = c)) : null) });
  });
}
