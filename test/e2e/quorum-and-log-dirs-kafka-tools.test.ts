/**
 * Apache Kafka's own kafka-metadata-quorum.sh (MetadataQuorumCommand) and
 * kafka-log-dirs.sh (LogDirsCommand) against the gateway, and the same
 * scenario against Apache Kafka: a topic of two partitions, three records
 * in the first. `describe --status` names the leader among the voters with
 * no follower lag, `describe --replication` lists the leader caught up, and
 * `--describe` lists each partition of the topic in the broker's log dir
 * with its size (bytes in the first, none in the second). Both print the
 * same fields from both brokers; what differs (the gateway's high watermark
 * is its partition count, its log dir names the core) is asserted apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { kafkaTool, table } from '../support/kafka-tools.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';

interface Observed {
  status: Record<string, string>;
  voters: { id: number; endpoints: string[] }[];
  replication: Record<string, string>[];
  logDirs: { brokers: { broker: number; logDirs: { logDir: string; error: string | null; partitions: { partition: string; size: number; offsetLag: number; isFuture: boolean }[] }[] }[] };
}

/** The scenario, run against one broker; what its tools printed. */
async function observe(bootstrap: string): Promise<{ topic: string; seen: Observed }> {
  const kafka = kafkajsClient(bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  const topic = uniqueTopic('tools-dirs');
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: ['one', 'two', 'three'].map((value) => ({ value, partition: 0 })) });
  await producer.disconnect();

  const status = await kafkaTool('MetadataQuorumCommand', bootstrap, ['describe', '--status']);
  expect(status.exit, status.stderr).toBe(0);
  const fields = Object.fromEntries(status.lines.map((l) => l.split(/:\s+(.*)/s, 2) as [string, string]));
  const replication = await kafkaTool('MetadataQuorumCommand', bootstrap, ['describe', '--replication']);
  expect(replication.exit, replication.stderr).toBe(0);
  const dirs = await kafkaTool('LogDirsCommand', bootstrap, ['--describe', '--topic-list', topic]);
  expect(dirs.exit, dirs.stderr).toBe(0);
  return {
    topic,
    seen: {
      status: fields,
      voters: JSON.parse(fields['CurrentVoters']!) as Observed['voters'],
      replication: table(replication.lines),
      logDirs: JSON.parse(dirs.lines.at(-1)!) as Observed['logDirs'],
    },
  };
}

/** What holds on any broker: the leader a voter, no lag, the topic's two partitions in one log dir, bytes only in the first. */
function expectKafkaShape({ topic, seen }: { topic: string; seen: Observed }, nodeId: number): void {
  expect(Object.keys(seen.status)).toEqual(['ClusterId', 'LeaderId', 'LeaderEpoch', 'HighWatermark', 'MaxFollowerLag', 'MaxFollowerLagTimeMs', 'CurrentVoters', 'CurrentObservers']);
  expect(Number(seen.status['LeaderId'])).toBe(nodeId);
  expect(seen.voters.map((v) => v.id)).toContain(nodeId);
  expect(seen.status['MaxFollowerLag']).toBe('0');
  expect(Number(seen.status['HighWatermark'])).toBeGreaterThan(0);
  const leader = seen.replication.find((r) => r['Status'] === 'Leader');
  expect(leader, JSON.stringify(seen.replication)).toMatchObject({ NodeId: String(nodeId), Lag: '0' });
  // Kafka's metadata log grows between the two runs (its controller appends no-op records); it never shrinks.
  expect(Number(leader!['LogEndOffset'])).toBeGreaterThanOrEqual(Number(seen.status['HighWatermark']));

  expect(seen.logDirs.brokers.map((b) => b.broker)).toEqual([nodeId]);
  const [dir] = seen.logDirs.brokers[0]!.logDirs;
  expect(dir!.error).toBeNull();
  const sizes = Object.fromEntries(dir!.partitions.map((p) => [p.partition, p.size]));
  expect(Object.keys(sizes).sort()).toEqual([`${topic}-0`, `${topic}-1`]);
  expect(sizes[`${topic}-0`]).toBeGreaterThan(0);
  expect(sizes[`${topic}-1`]).toBe(0);
  expect(dir!.partitions.every((p) => p.offsetLag === 0 && !p.isFuture)).toBe(true);
}

describe('kafka-metadata-quorum.sh and kafka-log-dirs.sh against the gateway (memory engine)', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({ engine: { engine: 'memory' } });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('show the gateway as the quorum leader and the topic partitions in its one log dir, sized', { timeout: 240_000 }, async () => {
    const observed = await observe(gateway.bootstrap);
    expectKafkaShape(observed, 0);
    const { seen } = observed;
    // This gateway's core holds the test's two partitions and nothing else.
    expect(seen.status['HighWatermark']).toBe('2');
    expect(seen.replication).toEqual([expect.objectContaining({ NodeId: '0', LogEndOffset: '2', Lag: '0', LastFetchTimestamp: '-1', Status: 'Leader' })]);
    expect(seen.voters).toEqual([{ id: 0, endpoints: [`PLAINTEXT://${gateway.bootstrap}`] }]);
    expect(seen.logDirs.brokers[0]!.logDirs[0]!.logDir).toBe(`queen-core://in-process:${gateway.bootstrap}`);
    // Three small records, one batch: a RecordBatch header (61 bytes) and three records.
    const size = seen.logDirs.brokers[0]!.logDirs[0]!.partitions.find((p) => p.partition.endsWith('-0'))!.size;
    expect(size).toBeGreaterThan(61);
    expect(size).toBeLessThan(200);
  });
});

describe('the same against Apache Kafka', () => {
  let kafka: ApacheKafka;
  beforeAll(async () => {
    kafka = await startApacheKafka({ autoCreateTopics: true, initialRebalanceDelayMs: 0 });
  }, 180_000);
  afterAll(async () => {
    await kafka?.stop();
  });

  it('prints the same fields: its controller leading the quorum, the partitions in its log dir, sized', { timeout: 240_000 }, async () => {
    const observed = await observe(kafka.bootstrap);
    expectKafkaShape(observed, kafka.nodeId);
    expect(observed.seen.logDirs.brokers[0]!.logDirs[0]!.logDir).toMatch(/^\//);
  });
});
