/**
 * A cluster of Apache Kafka brokers on loopback, the reference for the
 * gateway's cluster rig (test/support/cluster.ts): the same faults, a node
 * SIGKILLed or stopped and started again, measured against Kafka itself.
 *
 * ```ts
 * const cluster = await startApacheKafkaCluster({ nodes: 3 });
 * // 'bootstrap.servers': cluster.bootstrap (every node)
 * await cluster.nodes[1].kill(); await cluster.nodes[1].start();
 * await cluster.stop();
 * ```
 *
 * Every node is a KRaft node in the combined broker and controller roles, the
 * nodes one quorum of as many voters: each node's storage is formatted with
 * the same cluster id and `--initial-controllers` naming every voter (the
 * dynamic quorum of Kafka 4, found through controller.quorum.bootstrap.servers).
 * The internal topics (__consumer_offsets, __transaction_state) and new topics
 * are replicated to three nodes (fewer when there are fewer) with
 * min.insync.replicas 2, so one node may be down and writes with acks=all go
 * on. Each internal topic keeps one partition, as the single broker of
 * ./apache-kafka.ts has it: the group, the processor's group and the
 * transactional id then share one coordinator, and a fault on it hits all
 * three at once. Heap, threads and the JVM's lifetime are ./apache-kafka.ts's.
 *
 * A node is a RigProcess as the rig's gateways are: it keeps its ports and
 * folder across `kill()` (SIGKILL), `stop()` (SIGTERM, Kafka's controlled
 * shutdown) and `start()`, so it rejoins as the same broker, and `logs`
 * holds what Kafka logged (INFO, on stdout) across restarts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKey } from '../../protocol/api-keys.js';
import {
  apacheKafkaInstall,
  DEFAULT_JVM_OPTIONS,
  formatKafkaStorage,
  isPortTaken,
  log4jProperties,
  randomKafkaUuid,
  serverProperties,
  spawnKafka,
  startOnFreePorts,
  StartFailure,
  waitForMetadata,
  type KafkaJvm,
} from './apache-kafka.js';
import type { RigProcess } from './cluster.js';
import { sleep } from './eventually.js';
import { freePort, LogCapture } from './gateway.js';
import { RawConnection } from './raw-connection.js';

export interface ApacheKafkaClusterOptions {
  /** How many nodes (each a broker and a quorum voter); default 3. */
  nodes?: number;
  /** Further server.properties entries for every node; they replace the defaults of the same name. */
  config?: Record<string, string | number | boolean>;
  /** JVM options instead of ./apache-kafka.ts's defaults. */
  jvmOptions?: string[];
  /** How long a start waits for Metadata. Default 90 s. */
  startTimeoutMs?: number;
  /** How long a stop() waits for a clean shutdown before SIGKILL. Default 30 s. */
  stopTimeoutMs?: number;
}

/**
 * One node. `stop()` is Kafka's controlled shutdown, SIGKILL after
 * stopTimeoutMs; `start()` resolves once the node answers Metadata naming
 * itself (it has rejoined the quorum and caught up on the cluster's metadata).
 */
export interface ApacheKafkaNode extends RigProcess {
  /** The broker's (and voter's) node id, 1 to the number of nodes. */
  nodeId: number;
  port: number;
  controllerPort: number;
  /** "127.0.0.1:port" of this node alone. */
  bootstrap: string;
  /** Its server.properties and data. */
  dir: string;
}

export interface ApacheKafkaCluster {
  nodes: ApacheKafkaNode[];
  /** Every node, comma-separated, for bootstrap.servers. */
  bootstrap: string;
  clusterId: string;
  version: string;
  /** Each node's state and last log lines, for a failure message. */
  describe(lines?: number): string;
  /**
   * Waits until `nodeId` is in the ISR of every partition it is a replica of
   * (Metadata of all topics, asked of that node); answers the partitions it
   * is still missing from when `timeoutMs` ran out, none when it caught up.
   */
  waitUntilInSync(nodeId: number, timeoutMs: number): Promise<string[]>;
  /** Stops every node (SIGTERM at once, SIGKILL after 15 s) and removes the cluster's folder. */
  stop(): Promise<void>;
}

export async function startApacheKafkaCluster(options: ApacheKafkaClusterOptions = {}): Promise<ApacheKafkaCluster> {
  const { version, libs } = await apacheKafkaInstall();
  return startOnFreePorts(() => startOnce(options, version, libs));
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function startOnce(options: ApacheKafkaClusterOptions, version: string, libs: string): Promise<ApacheKafkaCluster> {
  const count = options.nodes ?? 3;
  const replicas = Math.min(3, count);
  const minInSync = Math.min(2, replicas);
  const dir = mkdtempSync(join(tmpdir(), 'queen-apache-kafka-cluster-'));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  const ports = await distinctFreePorts(count * 2);
  const clusterId = randomKafkaUuid();
  const voters = Array.from({ length: count }, (_, i) => ({ nodeId: i + 1, port: ports[i]!, controllerPort: ports[count + i]!, directoryId: randomKafkaUuid() }));
  const clusterConfig = {
    'controller.quorum.bootstrap.servers': voters.map((v) => `127.0.0.1:${v.controllerPort}`).join(','),
    'default.replication.factor': replicas,
    'min.insync.replicas': minInSync,
    'offsets.topic.replication.factor': replicas,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minInSync,
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': minInSync,
  };
  // id@host:port:directory-id of every voter; each node finds its own entry by node.id.
  const initialControllers = voters.map((v) => `${v.nodeId}@127.0.0.1:${v.controllerPort}:${v.directoryId}`).join(',');

  const nodes = voters.map((voter) => clusterNode(voter, dir, libs, options, clusterConfig));
  const stopAll = async () => {
    await Promise.all(nodes.map((n) => n.end('SIGTERM', 15_000)));
    process.removeListener('exit', removeDir);
    removeDir();
  };
  try {
    await Promise.all(nodes.map((n) => formatKafkaStorage(libs, n.propertiesFile, clusterId, ['--initial-controllers', initialControllers])));
    // All at once: a node answers Metadata only once the quorum it belongs to has a leader.
    await Promise.all(nodes.map((n) => n.start()));
    const everyNode = voters.map((v) => v.nodeId);
    for (const node of nodes) {
      await waitForMetadata(node.port, options.startTimeoutMs ?? 90_000, () => !node.running, everyNode).catch((e: Error) => {
        throw new Error(`${node.name} did not list every broker: ${e.message}\n${describe(nodes)}`);
      });
    }
  } catch (e) {
    const said = nodes.map((n) => n.logs.tail(40)).join('\n');
    await stopAll();
    if (e instanceof StartFailure) throw e;
    throw new StartFailure((e as Error).message, isPortTaken(said));
  }

  return {
    nodes,
    bootstrap: nodes.map((n) => n.bootstrap).join(','),
    clusterId,
    version,
    describe: (lines?: number) => describe(nodes, lines),
    waitUntilInSync: (nodeId, timeoutMs) => waitUntilInSync(nodes.find((n) => n.nodeId === nodeId)!, timeoutMs),
    stop: stopAll,
  };
}

function describe(nodes: readonly ApacheKafkaNode[], lines = 12): string {
  return nodes.map((n) => `--- ${n.name} on ${n.bootstrap} (${n.running ? `pid ${n.pid}` : 'not running'}):\n${n.logs.tail(lines)}`).join('\n');
}

interface ClusterNode extends ApacheKafkaNode {
  propertiesFile: string;
  end(signal: NodeJS.Signals, forceAfterMs: number): Promise<void>;
}

function clusterNode(
  voter: { nodeId: number; port: number; controllerPort: number },
  clusterDir: string,
  libs: string,
  options: ApacheKafkaClusterOptions,
  clusterConfig: Record<string, string | number>,
): ClusterNode {
  const { nodeId, port, controllerPort } = voter;
  const name = `kafka node ${nodeId}`;
  const dir = join(clusterDir, `node-${nodeId}`);
  mkdirSync(dir);
  const propertiesFile = join(dir, 'server.properties');
  const log4jFile = join(dir, 'log4j2.properties');
  const config = { ...clusterConfig, 'node.id': nodeId, ...options.config };
  writeFileSync(propertiesFile, serverProperties({ initialRebalanceDelayMs: 0, config }, dir, port, controllerPort) + '\n');
  writeFileSync(log4jFile, log4jProperties(null) + '\n');
  const jvmOptions = [...(options.jvmOptions ?? DEFAULT_JVM_OPTIONS), `-Dlog4j2.configurationFile=${log4jFile}`];
  const logs = new LogCapture();
  let jvm: KafkaJvm | null = null;
  const running = () => jvm !== null && !jvm.exited;
  const end = async (signal: NodeJS.Signals, forceAfterMs: number) => {
    await jvm?.end(signal, forceAfterMs);
  };
  return {
    nodeId,
    name,
    port,
    controllerPort,
    bootstrap: `127.0.0.1:${port}`,
    dir,
    logs,
    propertiesFile,
    get pid() {
      return running() ? jvm!.pid : undefined;
    },
    get running() {
      return running();
    },
    kill: () => end('SIGKILL', 0),
    stop: () => end('SIGTERM', options.stopTimeoutMs ?? 30_000),
    end,
    async start() {
      if (running()) throw new Error(`${name} is running already (pid ${jvm!.pid}); stop or kill it first.`);
      const started = spawnKafka(libs, jvmOptions, propertiesFile, (chunk) => logs.write(chunk));
      jvm = started;
      try {
        await waitForMetadata(port, options.startTimeoutMs ?? 90_000, () => started.exited, [nodeId]);
      } catch (e) {
        throw new StartFailure(`${name} did not answer Metadata on 127.0.0.1:${port}: ${(e as Error).message}\n${logs.tail(40)}`, false);
      }
      if (started.exited) throw new StartFailure(`${name} exited before it answered Metadata on 127.0.0.1:${port}:\n${logs.tail(40)}`, isPortTaken(logs.tail(40)));
    },
  };
}

interface MetadataPartition {
  partitionIndex: number;
  replicaNodes: number[];
  isrNodes: number[];
}

async function waitUntilInSync(node: ApacheKafkaNode, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let missing: string[] = ['(no Metadata answer yet)'];
  while (Date.now() < deadline) {
    let connection: RawConnection | null = null;
    try {
      connection = await RawConnection.open(node.port);
      const answer = await connection.request(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 5_000);
      missing = answer.topics.flatMap((t: { name: string; partitions: MetadataPartition[] }) =>
        t.partitions.filter((p) => p.replicaNodes.includes(node.nodeId) && !p.isrNodes.includes(node.nodeId)).map((p) => `${t.name}-${p.partitionIndex}`),
      );
      if (missing.length === 0) return [];
    } catch (e) {
      missing = [`(Metadata failed: ${(e as Error).message})`];
    } finally {
      connection?.destroy();
    }
    await sleep(200);
  }
  return missing;
}
