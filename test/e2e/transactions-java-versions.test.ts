/**
 * The Java client's transactions (kafka-clients 4.x, test/java-client) with
 * transaction version 2 on and off: the gateway with --transaction-version 2
 * (the default) and 1, and Apache Kafka 4.4 (which finalizes 2) beside them.
 * The same transactional producer aborts one transaction and commits one, with
 * offsets for a group in each, and is then fenced by a second instance.
 *
 * What a user sees is the same at both levels (read_committed reads the
 * committed records only, the group's offsets are the committed
 * transaction's, the first instance is fenced); what differs is on the wire,
 * and the test reads it there: with version 2 the client sends Produce v12 and
 * EndTxn v5, so every end bumps the epoch and the next transaction's batches
 * and markers carry the new one, as on Kafka; with version 1 one epoch serves
 * both transactions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { decodeBatches } from '../../protocol/records/record-batch.js';
import { apacheKafkaInstall, startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway } from '../support/gateway.js';
import { javaAdmin, javaTransactions } from '../support/java-client.js';
import { RawConnection } from '../support/raw-connection.js';
import { uniqueTopic } from '../support/records.js';

const kafkaVersion = (await apacheKafkaInstall()).version;
const memory = (await engineMatrix()).find((e) => e.name === 'memory')!;
afterAll(() => releaseEngines());

interface Target {
  name: string;
  /** The epochs the second transaction and its marker carry, counted from the first transaction's. */
  epochSteps: { abortMarker: number; secondBatch: number; commitMarker: number };
  start(): Promise<{ bootstrap: string; port: number; stop(): Promise<void> }>;
}

const BUMPED = { abortMarker: 1, secondBatch: 1, commitMarker: 2 };
const KEPT = { abortMarker: 0, secondBatch: 0, commitMarker: 0 };

const targets: Target[] = [
  { name: 'the gateway, transaction version 2', epochSteps: BUMPED, start: () => startGateway({ engine: memory.fresh(), autoCreateTopics: false, transactionVersion: 2 }) },
  { name: 'the gateway, transaction version 1', epochSteps: KEPT, start: () => startGateway({ engine: memory.fresh(), autoCreateTopics: false, transactionVersion: 1 }) },
  { name: `Apache Kafka ${kafkaVersion}`, epochSteps: BUMPED, start: () => startApacheKafka({ autoCreateTopics: false }) },
];

/** Partition 0 as a read_uncommitted reader gets it: each batch's kind, producer epoch and values. */
async function partitionLog(port: number, topic: string): Promise<{ control: boolean; epoch: number; values: string[] }[]> {
  const raw = await RawConnection.open(port);
  try {
    const answer = await raw.request(ApiKey.Fetch, 11, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const records = (answer.responses as { partitions: Message[] }[])[0]!.partitions[0]!.records as Buffer | null;
    return (records ? decodeBatches(records) : []).map((b) => ({ control: b.isControl, epoch: b.header.producerEpoch, values: b.isControl ? [] : b.records.map((r) => r.value!.toString()) }));
  } finally {
    raw.destroy();
  }
}

describe.skipIf(memory.skipReason !== null)(`Java client ${kafkaVersion} transactions with transaction version 2 on and off`, () => {
  describe.each(targets)('$name', (target) => {
    let server: Awaited<ReturnType<Target['start']>>;
    beforeAll(async () => {
      server = await target.start();
    }, 180_000);
    afterAll(() => server?.stop());

    it('aborts, commits with offsets and is fenced; the epochs on the wire say which protocol the client spoke', async () => {
      const topic = uniqueTopic('java-tv');
      const input = uniqueTopic('java-tv-in');
      const group = `${topic}-group`;
      const [created] = await javaAdmin(server.bootstrap, [{ op: 'createTopics', topics: [{ name: topic, partitions: 1, replicationFactor: 1 }, { name: input, partitions: 1, replicationFactor: 1 }] }]);
      expect(created?.error, JSON.stringify(created)).toBeUndefined();
      const lines = await javaTransactions(server.bootstrap, {
        topic,
        transactionalId: `${topic}-tid`,
        groupId: group,
        fence: true,
        steps: [
          { action: 'abort', records: [{ partition: 0, key: null, value: 'aborted' }], offsets: [{ topic: input, partition: 0, offset: 5 }] },
          { action: 'commit', records: [{ partition: 0, key: null, value: 'committed-0' }, { partition: 0, key: null, value: 'committed-1' }], offsets: [{ topic: input, partition: 0, offset: 7 }] },
        ],
      });
      expect(lines.filter((l) => l.event === 'step').map((l) => l.action), JSON.stringify(lines)).toEqual(['abort', 'commit']);
      expect(lines.find((l) => l.event === 'zombie')?.fenced, JSON.stringify(lines)).toBe(true);
      expect(lines.some((l) => l.event === 'successor-committed'), JSON.stringify(lines)).toBe(true);

      const log = await partitionLog(server.port, topic);
      // The two transactions: a batch, the abort marker, the batch(es) of the commit, the commit marker.
      const first = log[0]!;
      expect(first.values).toEqual(['aborted']);
      const abortMarker = log.findIndex((b) => b.control);
      const secondBatch = log.findIndex((b, i) => i > abortMarker && !b.control);
      const commitMarker = log.findIndex((b, i) => i > secondBatch && b.control);
      expect(log.slice(secondBatch, commitMarker).flatMap((b) => b.values)).toEqual(['committed-0', 'committed-1']);
      expect({
        abortMarker: log[abortMarker]!.epoch - first.epoch,
        secondBatch: log[secondBatch]!.epoch - first.epoch,
        commitMarker: log[commitMarker]!.epoch - first.epoch,
      }).toEqual(target.epochSteps);

      const offsets = await javaAdmin(server.bootstrap, [{ op: 'listConsumerGroupOffsets', group }]);
      expect(offsets[0]?.result, JSON.stringify(offsets)).toEqual({ [`${input}:0`]: { offset: 7, metadata: '' } });
    }, 180_000);
  });
});
