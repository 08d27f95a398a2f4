/**
 * Apache Kafka under the cluster rig's faults (test/e2e/cluster.test.ts): a
 * cluster of three Kafka brokers (test/support/apache-kafka-cluster.ts,
 * replication factor 3, min.insync.replicas 2) held to the same load
 * (test/support/cluster-load.ts: an idempotent producer, a transactional
 * processor and a consumer group of two, all librdkafka) while
 *
 * - the broker coordinating the group is SIGKILLed, stays down 4 s and is
 *   started again (the hardest case: the group's coordinator moves, as the
 *   rig's core scenario moves the group's lease);
 * - every broker in turn is stopped (SIGTERM, Kafka's controlled shutdown)
 *   and started again, and back in the ISR of its partitions before the
 *   next, 1 s apart.
 *
 * The load asserts what Kafka promises (each record stored and copied
 * exactly once, in order, nothing lost); the group's re-reads are Kafka's
 * at-least-once delivery and are logged in the rig's words (describeOutcome),
 * the figures the gateway's are compared with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { apacheKafkaInstall } from '../support/apache-kafka.js';
import { startApacheKafkaCluster, type ApacheKafkaCluster, type ApacheKafkaNode } from '../support/apache-kafka-cluster.js';
import { describeOutcome, underLoad, type LoadOptions } from '../support/cluster-load.js';
import { sleep, waitFor } from '../support/eventually.js';
import { RawConnection } from '../support/raw-connection.js';

const skipReason = await apacheKafkaInstall().then(
  () => null,
  (e: Error) => `Apache Kafka's jars are missing: ${e.message.split('\n')[0]}`,
);

describe.skipIf(skipReason !== null)(`Apache Kafka, three brokers, under the cluster rig's faults${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let cluster: ApacheKafkaCluster;

  beforeAll(async () => {
    cluster = await startApacheKafkaCluster({ nodes: 3 });
    // Kafka creates __consumer_offsets and __transaction_state on the first
    // FindCoordinator for a group and a transactional id. A cluster in use has
    // them, and the gateway's coordination is there from the start: so here
    // too, before the load, or the first fault would hit them being created.
    for (const keyType of [0, 1]) {
      await waitFor(async () => (await ask(cluster.nodes[0]!, ApiKey.FindCoordinator, 3, { key: 'warm-up', keyType })).errorCode === 0, {
        what: `FindCoordinator (key type ${keyType}) to name a coordinator`,
        timeoutMs: 60_000,
        intervalMs: 250,
        describe: () => cluster.describe(),
      });
    }
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  /** One request to one node, on a connection of its own. */
  async function ask(node: ApacheKafkaNode, apiKey: number, version: number, body: Message): Promise<Message> {
    const raw = await RawConnection.open(node.port);
    return raw.request(apiKey, version, body, 5_000).finally(() => raw.destroy());
  }

  /**
   * The load's topics are replicated to all three brokers (the broker's
   * default replication factor, as the load creates them): a fault then
   * moves leaders rather than taking partitions offline.
   */
  async function expectReplicatedThrice(topic: string): Promise<void> {
    const answer = await ask(cluster.nodes[0]!, ApiKey.Metadata, 12, { topics: [{ name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const replicas = answer.topics[0].partitions.map((p: { replicaNodes: number[] }) => p.replicaNodes.length);
    expect(replicas, `${topic}'s partitions' replica counts`).toEqual(replicas.map(() => 3));
  }

  /** The group's state and member count as its coordinator tells them (DescribeGroups). */
  async function groupState(node: ApacheKafkaNode, group: string): Promise<string> {
    const answer = await ask(node, ApiKey.DescribeGroups, 5, { groups: [group], includeAuthorizedOperations: false });
    const described = answer.groups[0];
    return described.errorCode === 0 ? `${described.groupState}, ${described.members.length} members` : `error ${described.errorCode}`;
  }

  /**
   * Every 250 ms, asks a surviving broker which broker coordinates the group
   * and that broker to describe it, until one does (the group is loaded
   * there): how long the group had no coordinator, and which took it on.
   */
  async function coordinatorReturn(group: string, victim: ApacheKafkaNode, killedAt: number): Promise<string> {
    const survivor = cluster.nodes.find((n) => n !== victim)!;
    for (;;) {
      const named = await ask(survivor, ApiKey.FindCoordinator, 3, { key: group, keyType: 0 }).catch(() => null);
      const coordinator = named?.errorCode === 0 ? cluster.nodes.find((n) => n.nodeId === named.nodeId) : undefined;
      const state = coordinator ? await groupState(coordinator, group).catch(() => null) : null;
      if (state && !state.startsWith('error')) return `broker ${coordinator!.nodeId} coordinated the group (${state}) ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the SIGKILL`;
      if (Date.now() - killedAt > 60_000) return 'no broker coordinated the group within 60 s of the SIGKILL';
      await sleep(250);
    }
  }

  /**
   * The load through `fault`, its outcome logged. The load's steps have
   * deadlines of their own, but after a failed step it waits for its
   * clients to stop before it rethrows; should that hang, the test says
   * so (and when a step failed) with the cluster's state, before vitest's
   * 300 s would say only that it timed out.
   */
  async function run(label: string, fault: LoadOptions['fault']): Promise<void> {
    const started = Date.now();
    let stepFailedAt: number | null = null;
    const target = {
      bootstrap: cluster.bootstrap,
      describe: () => {
        stepFailedAt ??= Date.now();
        return cluster.describe();
      },
    };
    const load = underLoad(target, label, {
      fault: async (input) => {
        await expectReplicatedThrice(input);
        await fault(input);
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const failed = stepFailedAt === null ? 'no step had failed' : `a step failed ${((stepFailedAt - started) / 1000).toFixed(1)} s in, and the load is still stopping its clients`;
        reject(new Error(`${label}: the load had not finished after 285 s (${failed})\n${cluster.describe()}`));
      }, 285_000);
    });
    const outcome = await Promise.race([load, hung]).finally(() => clearTimeout(timer));
    console.log(`${describeOutcome(outcome)}\n  (Apache Kafka ${cluster.version}, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }

  it('loses and doubles nothing when the broker coordinating the group is SIGKILLed under load, 4 s down, and rejoins', async () => {
    let victim: ApacheKafkaNode | undefined;
    await run('kafka-sigkill', async (input) => {
      const group = `${input}-group`;
      const answer = await ask(cluster.nodes[0]!, ApiKey.FindCoordinator, 3, { key: group, keyType: 0 });
      victim = cluster.nodes.find((n) => n.nodeId === answer.nodeId);
      expect(victim, `FindCoordinator answered ${JSON.stringify(answer)}`).toBeDefined();
      const state = await groupState(victim!, group);
      await victim!.kill();
      const returned = coordinatorReturn(group, victim!, Date.now());
      await sleep(4_000);
      await victim!.start();
      console.log(`kafka-sigkill: SIGKILL to broker ${victim!.nodeId}, the group's coordinator (the group ${state} then); ${await returned}`);
    });
    expect(victim?.running).toBe(true);
    // Back in the ISR of its partitions, as a replica that rejoined is.
    expect(await cluster.waitUntilInSync(victim!.nodeId, 30_000)).toEqual([]);
  }, 300_000);

  it('loses and doubles nothing through a rolling restart of all three brokers under load', async () => {
    const lagging: string[] = [];
    await run('kafka-rolling', async () => {
      for (const node of cluster.nodes) {
        const from = Date.now();
        await node.stop();
        await node.start();
        const missing = await cluster.waitUntilInSync(node.nodeId, 30_000);
        if (missing.length > 0) lagging.push(`broker ${node.nodeId} not back in the ISR of ${missing.join(', ')} after 30 s`);
        console.log(`kafka-rolling: broker ${node.nodeId} stopped, started and in sync in ${((Date.now() - from) / 1000).toFixed(1)} s`);
        await sleep(1_000);
      }
    });
    expect(cluster.nodes.every((n) => n.running)).toBe(true);
    expect(lagging).toEqual([]);
  }, 300_000);
});
