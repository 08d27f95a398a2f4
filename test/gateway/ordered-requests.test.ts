/**
 * Requests a client pipelines on one connection take effect in the order
 * sent, where their order matters (src/gateway/connection.ts, ORDERED_APIS),
 * on the PostgreSQL engine, where two requests run side by side could reach
 * the database in either order:
 *
 * - an EndTxn(abort) sent right behind the AddPartitionsToTxn that opens the
 *   transaction aborts it (librdkafka does this; the fault campaign saw the
 *   abort refused with INVALID_TXN_STATE before);
 * - of two OffsetCommits for one partition sent back to back, the later one
 *   is what OffsetFetch answers.
 *
 * A guard more than a reproduction: with the core in this process the two
 * requests reach PostgreSQL in order even when run side by side, so these
 * pass without the ordering too. The race showed in the fault campaign,
 * with cores behind the RPC on a loaded machine (librdkafka's eos log: the
 * EndTxn sent 25 ms behind an AddPartitionsToTxn in flight, refused).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { decodeResponse } from '../../protocol/frames.js';
import { startBroker, type Broker } from '../../src/index.js';
import { findTestDatabase } from '../support/postgres.js';
import { WireClient } from './wire-client.js';

const found = await findTestDatabase();
const ROUNDS = 15;

describe.skipIf(found.skipReason !== null)(`requests pipelined on one connection take effect in order (PostgreSQL)${found.skipReason ? ` (skipped: ${found.skipReason})` : ''}`, () => {
  let broker: Broker;
  let client: WireClient;
  const topic = 'ordered-requests';

  beforeAll(async () => {
    broker = await startBroker({ engine: 'postgres', url: found.database!.url, schema: found.database!.freshSchema('ordered_requests'), logLevel: 'silent' } as never);
    await broker.core.createQueue({ name: topic, partitions: 2, config: {} });
    client = await WireClient.open(broker.port);
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await broker?.stop();
    await found.database?.release();
  });

  /** Sends every request before reading any answer; the answers in order. */
  async function pipelined(requests: [number, number, Message][]): Promise<Message[]> {
    const ids = requests.map(([key, version, body]) => client.send(key, version, body));
    const answers: Message[] = [];
    for (const [i, id] of ids.entries()) {
      const next = await client.next(10_000);
      expect(next.correlationId).toBe(id);
      answers.push(decodeResponse(next.frame, requests[i]![0], requests[i]![1]).body);
    }
    return answers;
  }

  it('an EndTxn(abort) sent right behind the AddPartitionsToTxn that opens the transaction aborts it, every time', async () => {
    const transactionalId = `ordered-${process.pid}`;
    const init = await client.request(ApiKey.InitProducerId, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(0);
    const who = { producerId: init.producerId as bigint, producerEpoch: init.producerEpoch as number };
    const codes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [added, ended] = await pipelined([
        [ApiKey.AddPartitionsToTxn, 3, { v3AndBelowTransactionalId: transactionalId, v3AndBelowProducerId: who.producerId, v3AndBelowProducerEpoch: who.producerEpoch, v3AndBelowTopics: [{ name: topic, partitions: [round % 2] }] }],
        [ApiKey.EndTxn, 3, { transactionalId, ...who, committed: false }],
      ]);
      const addCode = (added!.resultsByTopicV3AndBelow as Message[])[0]!.resultsByPartition[0].partitionErrorCode as number;
      codes.push(`${addCode}/${ended!.errorCode as number}`);
    }
    expect(codes).toEqual(Array.from({ length: ROUNDS }, () => '0/0'));
  });

  it('of two OffsetCommits for one partition sent back to back, the later one is stored, every time', async () => {
    const group = `ordered-commits-${process.pid}`;
    const commit = (offset: number): [number, number, Message] => [
      ApiKey.OffsetCommit,
      8,
      { groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: BigInt(offset), committedLeaderEpoch: -1, committedMetadata: null }] }] },
    ];
    const stored: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const answers = await pipelined([commit(round * 10), commit(round * 10 + 5)]);
      for (const a of answers) expect((a.topics as Message[])[0]!.partitions[0].errorCode).toBe(0);
      const fetched = await client.request(ApiKey.OffsetFetch, 8, { groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: topic, partitionIndexes: [0] }] }], requireStable: false });
      stored.push(Number((fetched.groups as Message[])[0]!.topics[0].partitions[0].committedOffset));
    }
    expect(stored).toEqual(Array.from({ length: ROUNDS }, (_, i) => (i + 1) * 10 + 5));
  });
});
