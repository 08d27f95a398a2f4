/**
 * The idempotent producer. Clients never send a bad sequence on purpose, so
 * the broker's rules are driven with raw requests built by the project's
 * protocol layer: an exact resend, a sequence gap, a stale epoch after an
 * epoch bump (KIP-360), a new epoch that does not start at 0, an id no broker
 * handed out. Then kafkajs's and librdkafka's idempotent producers, as users
 * run them, and what the stored batches carry.
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import { kafkajsClient } from '../../support/kafkajs.js';
import { connectProducer, disconnect, produceAll } from '../../support/rdkafka.js';
import type { RawConnection } from '../../support/raw-connection.js';
import { code, type Scenario, type ScenarioContext } from '../harness.js';
import { createTopicRaw, produceAnswer, producerIdMarker, rawFetch, rawProduce, V, withRaw } from '../observe.js';

const T0 = Date.UTC(2024, 5, 1);

/** Errors a client retries InitProducerId on (Kafka's transaction coordinator loads its topic first). */
const RETRIED = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR]);

async function initProducerId(raw: RawConnection, producerId = -1n, producerEpoch = -1) {
  for (let attempt = 0; ; attempt++) {
    const a = await raw.request(ApiKey.InitProducerId, V.initProducerId, { transactionalId: null, transactionTimeoutMs: 60_000, producerId, producerEpoch });
    if (!RETRIED.has(a.errorCode as number) || attempt >= 100) return { errorCode: a.errorCode as number, producerId: a.producerId as bigint, producerEpoch: a.producerEpoch as number };
    await new Promise((r) => setTimeout(r, 100));
  }
}

function batch(producerId: bigint, producerEpoch: number, baseSequence: number, values: string[]): Buffer {
  return buildBatch({ producerId, producerEpoch, baseSequence, records: values.map((value, i) => ({ value, timestamp: T0 + i })) });
}

async function createTopic(ctx: ScenarioContext, raw: RawConnection, name: string): Promise<void> {
  const { errorCode } = await createTopicRaw(raw, name, 1);
  if (errorCode !== 0) throw new Error(`creating ${name} on ${ctx.target.name} answered ${code(errorCode)}`);
}

const sequenceRules: Scenario = {
  name: 'idempotent producer: resend, gap, stale epoch',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-idempotent-raw';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      const init = await initProducerId(raw);
      const id = init.producerId;
      const send = async (epoch: number, seq: number, values: string[], producerId = id) => produceAnswer(await rawProduce(raw, topic, 0, batch(producerId, epoch, seq, values)), n);
      const steps: Record<string, unknown> = {
        init: { error: code(init.errorCode), producerId: producerIdMarker(init.producerId), producerEpoch: init.producerEpoch },
        first: await send(0, 0, ['a0', 'a1', 'a2']),
        exactResend: await send(0, 0, ['a0', 'a1', 'a2']),
        next: await send(0, 3, ['b3', 'b4']),
        resendOfOlder: await send(0, 0, ['a0', 'a1', 'a2']),
        gap: await send(0, 10, ['gap']),
        overlapping: await send(0, 4, ['b4', 'c5']),
      };
      // A new epoch on the partition: it must start at sequence 0, and then the old epoch is fenced.
      steps.newEpochNotAtZero = await send(init.producerEpoch + 1, 3, ['new-3']);
      steps.newEpochAtZero = await send(init.producerEpoch + 1, 0, ['new-0']);
      steps.staleEpoch = await send(init.producerEpoch, 5, ['stale']);
      // InitProducerId again with the producer's id and epoch (KIP-360).
      const bumped = await initProducerId(raw, id, init.producerEpoch);
      steps.bump = { error: code(bumped.errorCode), sameProducerId: bumped.producerId === id, producerEpoch: bumped.producerEpoch };
      // An id this broker never handed out.
      const stranger = id + 1_000_000n;
      steps.unknownIdAtZero = await send(0, 0, ['stranger-0'], stranger);
      steps.fetched = await rawFetch(raw, topic, { partition: 0, offset: 0 }, n);
      const producers = await raw.request(ApiKey.DescribeProducers, V.describeProducers, { topics: [{ name: topic, partitionIndexes: [0] }] });
      const p = (producers.topics as { partitions: Message[] }[])[0]!.partitions[0]!;
      steps.describeProducers = {
        error: code(p.errorCode),
        active: (p.activeProducers as Message[])
          .map((s) => ({
            producer: s.producerId === id ? 'initialised' : s.producerId === stranger ? 'stranger' : 'other',
            producerEpoch: s.producerEpoch,
            lastSequence: s.lastSequence,
            lastTimestamp: Number(s.lastTimestamp),
            coordinatorEpoch: s.coordinatorEpoch,
            currentTxnStartOffset: Number(s.currentTxnStartOffset),
          }))
          .sort((a, b) => a.producer.localeCompare(b.producer)),
      };
      // Last, so that what it changes stays out of the observations above.
      steps.unknownIdNotAtZero = await send(0, 7, ['stranger-7'], stranger + 1n);
      return steps;
    });
  },
};

const idempotentClients: Scenario = {
  name: 'idempotent producers: kafkajs and librdkafka',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-idempotent-clients';
    await withRaw(ctx, (raw) => createTopic(ctx, raw, topic));
    const kafka = kafkajsClient(ctx.target.bootstrap, { clientId: 'queen-diff' });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    const kafkajsSends: unknown[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const result = await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: `kjs-${i}`, timestamp: String(T0 + i) }, { partition: 0, value: `kjs-${i}b`, timestamp: String(T0 + i) }] });
        kafkajsSends.push(result.map((m) => ({ partition: m.partition, errorCode: m.errorCode, baseOffset: m.baseOffset })));
      }
    } finally {
      await producer.disconnect();
    }
    const rd = await connectProducer(ctx.target.bootstrap, { 'enable.idempotence': true, 'linger.ms': 20 }, topic);
    let deliveries;
    try {
      deliveries = await produceAll(
        rd,
        topic,
        Array.from({ length: 4 }, (_, i) => ({ partition: 0, key: null, value: `rdk-${i}`, headers: [], timestamp: T0 + 10 + i })),
      );
    } finally {
      await disconnect(rd);
    }
    const fetched = await withRaw(ctx, (raw) => rawFetch(raw, topic, { partition: 0, offset: 0 }, n));
    return { kafkajsSends, librdkafka: deliveries.map((d) => ({ offset: d.offset, error: d.error?.code ?? null })), fetched };
  },
};

export const IDEMPOTENT_SCENARIOS: Scenario[] = [sequenceRules, idempotentClients];
