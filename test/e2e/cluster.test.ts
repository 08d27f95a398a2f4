/**
 * The cluster rig (test/support/cluster.ts): PostgreSQL, a Redis of its own,
 * two cores and three gateways, all real processes on loopback. Under load,
 * through each fault in turn (a gateway SIGKILLed and started again, a
 * rolling restart of all three gateways, Redis stopped and started again):
 *
 * - an idempotent librdkafka producer with all three gateways in
 *   bootstrap.servers writes numbered, keyed records: the topic holds each
 *   exactly once, in order per partition (so per key);
 * - a transactional consume-transform-produce processor (librdkafka, read
 *   committed, offsets in the transaction) copies them: the output holds
 *   each exactly once, in order;
 * - a consumer group of two librdkafka members reads them all.
 *
 * In the gateway and Redis scenarios the group and the processor use the two
 * gateways of core 0; the idempotent producer uses all three, across both
 * cores. In the core scenario everything uses all three gateways, so the
 * group and the transactional id are coordinated by whichever core holds
 * their lease (coordinator leases, src/core/coordination/), and the core
 * holding the group's lease is SIGKILLed: its leases move to the other core
 * and the clients carry on.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import { RawConnection } from '../support/raw-connection.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterRig, type ClusterRig } from '../support/cluster.js';
import { sleep } from '../support/eventually.js';
import { allRecords, sequenceCounts, startMember, waitForAllRecords, type GroupMember } from '../support/groups-members.js';
import { findTestDatabase } from '../support/postgres.js';
import { connectProducer, createTopic, disconnect, expectDelivered, expectStoredCount, produceAll, readRecords } from '../support/rdkafka.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from '../support/records.js';
import { redisServerMissing } from '../support/redis.js';
import { TransactionalProcessor } from '../support/transactional-processor.js';

const found = await findTestDatabase();
const missing = redisServerMissing();
const skipReason = found.skipReason ?? missing;

const PARTITIONS = 6;
const TOTAL = 1_800;
const CHUNK = 60;

describe.skipIf(skipReason !== null)(`a cluster of two cores and three gateways${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let rig: ClusterRig;
  /** The gateways of core 0: where the group and the transactional processor connect. */
  let oneCore: string;

  beforeAll(async () => {
    rig = await startClusterRig({ database: { url: found.database!.url, schema: found.database!.freshSchema('queen_cluster') }, gatewayCores: [0, 0, 1] });
    oneCore = rig.gateways.filter((g) => g.core === 0).map((g) => g.bootstrap).join(',');
  }, 180_000);
  afterAll(async () => {
    await rig?.stop();
    await found.database?.release();
  }, 60_000);

  /**
   * Produces TOTAL numbered records in chunks while `fault` runs, with the
   * processor and the group reading along, then accounts for every record.
   */
  async function underLoad(label: string, fault: (topic: string) => Promise<void>, clients: () => string = () => oneCore): Promise<void> {
    const input = uniqueTopic(`${label}-in`);
    const output = uniqueTopic(`${label}-out`);
    await createTopic(rig.bootstrap, input, PARTITIONS);
    await createTopic(rig.bootstrap, output, PARTITIONS);
    const partitions = Array.from({ length: PARTITIONS }, (_, p) => p);
    const records: SentRecord[] = Array.from({ length: TOTAL }, (_, seq) => ({
      partition: seq % PARTITIONS,
      key: `key-${seq % (PARTITIONS * 2)}`,
      value: sequencedValue(label, seq),
      headers: [],
      timestamp: Date.now(),
    }));

    const members: GroupMember[] = [];
    for (const name of ['a', 'b']) members.push(await startMember({ bootstrap: clients(), group: `${input}-group`, topic: input, name: `${label}-${name}` }));
    const processor = new TransactionalProcessor({
      bootstrap: clients(),
      input,
      output,
      partitions,
      group: `${input}-processor`,
      transactionalId: `${input}-tx`,
      commitEvery: 50,
      transform: (value) => value.replace(`${label}:`, `${label}-copied:`),
      inputEnd: new Map(partitions.map((p) => [p, TOTAL / PARTITIONS])),
    });
    const processed = processor.run(240_000);
    try {
      const producer = await connectProducer(rig.bootstrap, {
        'enable.idempotence': true,
        'linger.ms': 5,
        'message.timeout.ms': 120_000,
        'metadata.max.age.ms': 2_000,
        'topic.metadata.refresh.interval.ms': 1_000,
      });
      const faultDone = (async () => {
        await sleep(1_000);
        await fault(input);
      })();
      try {
        for (let from = 0; from < TOTAL; from += CHUNK) {
          expectDelivered(await produceAll(producer, input, records.slice(from, from + CHUNK), { timeoutMs: 120_000 }));
          await sleep(100);
        }
      } finally {
        await faultDone;
        await disconnect(producer);
      }

      // The input: every record once, in order per partition (so per key), nothing extra stored.
      await expectStoredCount(rig.bootstrap, input, partitions, TOTAL);
      expectExactlyOnceInOrder(label, TOTAL, await readRecords(rig.bootstrap, input, { partitions, count: TOTAL, timeoutMs: 60_000 }));

      const run = await processed;
      const copied = await readRecords(clients(), output, { partitions, count: TOTAL, timeoutMs: 60_000, config: { 'isolation.level': 'read_committed' } });
      expectExactlyOnceInOrder(`${label}-copied`, TOTAL, copied);
      expect(run.transactions).toBeGreaterThan(0);

      await waitForAllRecords(label, TOTAL, members, 90_000);
      const counts = sequenceCounts(label, allRecords(members));
      const redelivered = [...counts.values()].filter((n) => n > 1).length;
      const perMember = members.map((m) => `${m.name} ${m.records.length} records, ${m.events.length} rebalances, ${m.errors.length} errors${m.errors.length ? ` (${m.errors.slice(0, 3).join(' | ')})` : ''}`).join('; ');
      const crossMember = [...counts.keys()].filter((seq) => members.filter((m) => sequenceCounts(label, m.records).has(seq)).length > 1).length;
      console.log(`${label}: ${perMember}; ${crossMember} records read by both members`);
      // A consumer group delivers at least once (Kafka's promise): a record whose offset
      // was not yet committed when its partition moved is read again. Logged, not failed.
      console.log(`${label}: the group read ${counts.size} of ${TOTAL} records, ${redelivered} of them more than once; the processor ran ${run.instances} instance(s), ${run.transactions} transactions`);
    } finally {
      await Promise.all(members.map((m) => m.close()));
      await processed.catch(() => {});
    }
  }

  it('loses and doubles nothing when a gateway is SIGKILLed under load; clients move to the others, and it rejoins', async () => {
    const victim = rig.gateways[1]!;
    await underLoad('sigkill', async () => {
      await victim.kill();
      await sleep(4_000);
      await victim.start();
    });
    expect(victim.running).toBe(true);
  }, 300_000);

  it('loses and doubles nothing through a rolling restart of all three gateways under load', async () => {
    await underLoad('rolling', async () => {
      for (const gateway of rig.gateways) {
        await gateway.stop();
        await gateway.start();
        await sleep(1_000);
      }
    });
    expect(rig.gateways.every((g) => g.running)).toBe(true);
  }, 300_000);

  it('loses and doubles nothing when the core coordinating the group is SIGKILLed under load: its leases move to the other core', async () => {
    let victim: (typeof rig.cores)[number] | undefined;
    await underLoad(
      'core-sigkill',
      async (input) => {
        // The gateway FindCoordinator names for the group is one of the lease holder's.
        const raw = await RawConnection.open(rig.gateways[0]!.port);
        const answer = await raw.request(ApiKey.FindCoordinator, 3, { key: `${input}-group`, keyType: 0 }).finally(() => raw.destroy());
        const coordinator = rig.gateways.find((g) => g.port === answer.port);
        expect(coordinator, `FindCoordinator answered ${JSON.stringify(answer)}`).toBeDefined();
        victim = rig.cores[coordinator!.core]!;
        await victim.kill();
        await sleep(6_000);
        await victim.start();
      },
      () => rig.bootstrap,
    );
    expect(victim?.running).toBe(true);
  }, 300_000);

  it('loses and doubles nothing while Redis is stopped and started again under load', async () => {
    await underLoad('redis', async () => {
      await rig.redis.stop();
      await sleep(4_000);
      await rig.redis.start();
    });
    // Every gateway found Redis again (ioredis reconnects on its own).
    for (const g of rig.gateways) expect(g.logs.matching('Redis is back').length, `${g.name}:\n${g.logs.tail()}`).toBeGreaterThan(0);
  }, 300_000);
});
