/**
 * The cluster rig (test/support/cluster.ts): PostgreSQL, a Redis of its own,
 * two cores and three gateways, all real processes on loopback. Under load,
 * through each fault in turn (a gateway SIGKILLed and started again, a
 * rolling restart of all three gateways, the core coordinating the group
 * SIGKILLed, Redis stopped and started again):
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
 * holding the group's lease is SIGKILLed: its gateways leave the survivors'
 * Metadata, its leases move to the other core and the clients carry on.
 *
 * The load and its accounting are test/support/cluster-load.ts, shared with
 * test/differential/cluster.test.ts, which holds three Apache Kafka brokers
 * to the same faults: the group's re-reads printed here compare with those.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import { RawConnection } from '../support/raw-connection.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listedPorts, startClusterRig, type ClusterRig } from '../support/cluster.js';
import { describeOutcome, underLoad, type LoadOptions } from '../support/cluster-load.js';
import { sleep, waitFor } from '../support/eventually.js';
import { findTestDatabase } from '../support/postgres.js';
import { redisServerMissing } from '../support/redis.js';

const found = await findTestDatabase();
const missing = redisServerMissing();
const skipReason = found.skipReason ?? missing;

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

  /** The load of test/support/cluster-load.ts through `fault`; the group's re-reads logged, not failed. */
  async function run(label: string, fault: LoadOptions['fault'], clients: string = oneCore, groupProtocol: LoadOptions['groupProtocol'] = 'classic'): Promise<void> {
    await rig.converged();
    const target = { bootstrap: rig.bootstrap, describe: () => rig.describe() };
    console.log(describeOutcome(await underLoad(target, label, { clients, fault, groupProtocol })));
  }

  async function describeConsumerGroup(port: number, group: string): Promise<{ errorCode: number; members: unknown[] } | undefined> {
    const raw = await RawConnection.open(port);
    const answer = await raw.request(ApiKey.ConsumerGroupDescribe, 0, { groupIds: [group], includeAuthorizedOperations: false }).finally(() => raw.destroy());
    const described = answer.groups[0];
    return described?.errorCode === 0 ? described : undefined;
  }

  /** The gateway FindCoordinator names for `group` (one of its lease holder's). */
  async function coordinatorOf(group: string): Promise<ClusterRig['gateways'][number]> {
    const raw = await RawConnection.open(rig.gateways[0]!.port);
    const answer = await raw.request(ApiKey.FindCoordinator, 3, { key: group, keyType: 0 }).finally(() => raw.destroy());
    const coordinator = rig.gateways.find((g) => g.port === answer.port);
    expect(coordinator, `FindCoordinator answered ${JSON.stringify(answer)}`).toBeDefined();
    return coordinator!;
  }

  it('loses and doubles nothing when a gateway is SIGKILLed under load; clients move to the others, and it rejoins', async () => {
    const victim = rig.gateways[1]!;
    await run('sigkill', async () => {
      await victim.kill();
      await sleep(4_000);
      await victim.start();
    });
    expect(victim.running).toBe(true);
  }, 300_000);

  it('a KIP-848 group (group.protocol=consumer) reads everything when the gateway it heartbeats to is SIGKILLed under load, and it rejoins', async () => {
    let victim: ClusterRig['gateways'][number] | undefined;
    await run(
      'kip848-sigkill',
      async (input) => {
        // The members heartbeat to the gateway FindCoordinator names: that one dies, once it describes both as KIP-848 members.
        victim = await coordinatorOf(`${input}-group`);
        await waitFor(async () => (await describeConsumerGroup(victim!.port, `${input}-group`))?.members.length === 2, {
          what: `ConsumerGroupDescribe on ${victim.name} to show ${input}-group as a consumer group of two members`,
          timeoutMs: 30_000,
          describe: () => rig.describe(),
        });
        await victim.kill();
        await sleep(4_000);
        await victim.start();
      },
      oneCore,
      'consumer',
    );
    expect(victim?.running).toBe(true);
  }, 300_000);

  it('loses and doubles nothing through a rolling restart of all three gateways under load', async () => {
    await run('rolling', async () => {
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
    await run(
      'core-sigkill',
      async (input) => {
        // The gateway FindCoordinator names for the group is one of the lease holder's.
        const raw = await RawConnection.open(rig.gateways[0]!.port);
        const answer = await raw.request(ApiKey.FindCoordinator, 3, { key: `${input}-group`, keyType: 0 }).finally(() => raw.destroy());
        const coordinator = rig.gateways.find((g) => g.port === answer.port);
        expect(coordinator, `FindCoordinator answered ${JSON.stringify(answer)}`).toBeDefined();
        victim = rig.cores[coordinator!.core]!;
        const deadCore = coordinator!.core;
        await victim.kill();
        // Its gateways leave the cluster: a survivor's Metadata names only the gateways that can serve.
        const survivor = rig.gateways.find((g) => g.core !== deadCore)!;
        const serving = rig.gateways.filter((g) => g.core !== deadCore).map((g) => g.port).sort((a, b) => a - b);
        await waitFor(async () => JSON.stringify(await listedPorts(survivor.port)) === JSON.stringify(serving), {
          what: `the gateways of the killed core ${deadCore} to leave ${survivor.name}'s Metadata`,
          timeoutMs: 5_000,
          intervalMs: 100,
          describe: () => rig.describe(),
        });
        await sleep(6_000);
        await victim.start();
        // Back with their core, they are listed again.
        await waitFor(async () => (await listedPorts(survivor.port)).length === rig.gateways.length, { what: 'every gateway to be listed again', timeoutMs: 15_000, describe: () => rig.describe() });
      },
      rig.bootstrap,
    );
    expect(victim?.running).toBe(true);
  }, 300_000);

  it('loses and doubles nothing while Redis is stopped and started again under load', async () => {
    await run('redis', async () => {
      await rig.redis.stop();
      await sleep(4_000);
      await rig.redis.start();
    });
    // Every gateway found Redis again (ioredis reconnects on its own).
    for (const g of rig.gateways) expect(g.logs.matching('Redis is back').length, `${g.name}:\n${g.logs.tail()}`).toBeGreaterThan(0);
  }, 300_000);
});
