/**
 * The faults of Apache Kafka's own run of the campaign (./kafka-target.ts),
 * on a cluster of three KRaft nodes in combined roles (test/support/
 * apache-kafka-cluster.ts: replication factor 3, min.insync.replicas 2),
 * picked by the campaign's scheduler (./faults.ts `scheduleFaults`):
 *
 * - a broker SIGKILLed, down 1-4 s, started again on the same folder (its
 *   disk kept), as the gateway's cores and gateways are;
 * - a broker frozen with SIGSTOP for 1-5 s, then SIGCONT;
 * - the active controller SIGKILLed: the node leading the KRaft quorum
 *   (DescribeQuorum), down 1-4 s and started again; every node is also a
 *   broker, so this is the broker fault on the one node whose loss also
 *   moves the quorum's leadership.
 *
 * Each fault returns only once the node is back in the ISR of every
 * partition it replicates (as the replicated store's faults return only
 * once the store is whole again), so the next fault always finds two more
 * in-sync replicas: the loss of any one broker is what Kafka promises to
 * survive with acks=all and min.insync.replicas 2.
 *
 * Network cuts of one broker do not apply here: the nodes advertise and
 * vote on 127.0.0.1, so a broker moved into a namespace needs listeners,
 * advertised listeners and the quorum's voters on the veth address, which
 * the cluster support does not set up; and this machine has neither netem
 * nor iptables to cut one loopback port (docs/fault-campaign.md).
 */
import { ApiKey } from '../../protocol/api-keys.js';
import type { ApacheKafkaCluster, ApacheKafkaNode } from '../support/apache-kafka-cluster.js';
import { sleep } from '../support/eventually.js';
import { RawConnection } from '../support/raw-connection.js';
import { between, pick, signal, type Fault } from './faults.js';

/** How long a node may take to be back in the ISR of all its partitions (a JVM start on a loaded machine). */
const IN_SYNC_MS = 180_000;

export const KAFKA_FAULTS_NOT_APPLYING = 'network cuts of one broker (the nodes advertise and vote on 127.0.0.1; no netem or iptables for one loopback port)';

export function kafkaFaults(cluster: ApacheKafkaCluster): Fault[] {
  return [
    { kind: 'broker SIGKILL', run: (random) => killAndRestart(cluster, pick(random, cluster.nodes), random) },
    { kind: 'broker SIGSTOP', run: (random) => freeze(cluster, pick(random, cluster.nodes), random) },
    {
      kind: 'active controller SIGKILL',
      async run(random) {
        const leader = await quorumLeader(cluster);
        const node = cluster.nodes.find((n) => n.nodeId === leader);
        if (!node) throw new Error(`DescribeQuorum named node ${leader}, not one of the cluster's`);
        return `the quorum's leader, ${await killAndRestart(cluster, node, random)}`;
      },
    },
  ];
}

async function startAgain(node: ApacheKafkaNode): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await node.start();
    } catch (e) {
      if (attempt === 3) throw e;
      await node.kill();
      await sleep(1_000);
    }
  }
}

async function backInSync(cluster: ApacheKafkaCluster, node: ApacheKafkaNode, started: number): Promise<string> {
  const missing = await cluster.waitUntilInSync(node.nodeId, IN_SYNC_MS);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (missing.length > 0) return `NOT back in the ISR after ${seconds} s (missing from ${missing.slice(0, 5).join(', ')})`;
  return `back in the ISR ${seconds} s after the fault began`;
}

async function killAndRestart(cluster: ApacheKafkaCluster, node: ApacheKafkaNode, random: () => number): Promise<string> {
  const down = between(random, 1_000, 4_000);
  const started = Date.now();
  await node.kill();
  await sleep(down);
  await startAgain(node);
  return `${node.name} down ${down} ms, ${await backInSync(cluster, node, started)}`;
}

async function freeze(cluster: ApacheKafkaCluster, node: ApacheKafkaNode, random: () => number): Promise<string> {
  const frozen = between(random, 1_000, 5_000);
  const started = Date.now();
  signal(node.pid, 'SIGSTOP');
  try {
    await sleep(frozen);
  } finally {
    signal(node.pid, 'SIGCONT');
  }
  return `${node.name} frozen ${frozen} ms, ${await backInSync(cluster, node, started)}`;
}

/** The node id leading the KRaft quorum, asked of each running node in turn until one answers. */
export async function quorumLeader(cluster: ApacheKafkaCluster): Promise<number> {
  const errors: string[] = [];
  for (let round = 0; round < 20; round++) {
    for (const node of cluster.nodes.filter((n) => n.running)) {
      let connection: RawConnection | null = null;
      try {
        connection = await RawConnection.open(node.port);
        const answer = await connection.request(ApiKey.DescribeQuorum, 1, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }, 5_000);
        const partition = answer.topics?.[0]?.partitions?.[0];
        if (answer.errorCode === 0 && partition && partition.errorCode === 0 && partition.leaderId >= 0) return partition.leaderId as number;
        errors.push(`${node.name}: error ${answer.errorCode}/${partition?.errorCode}, leader ${partition?.leaderId}`);
      } catch (e) {
        errors.push(`${node.name}: ${(e as Error).message}`);
      } finally {
        connection?.destroy();
      }
    }
    await sleep(500);
  }
  throw new Error(`no node named the quorum's leader: ${errors.slice(-3).join('; ')}`);
}
