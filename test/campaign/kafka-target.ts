/**
 * Apache Kafka's own run of the fault campaign (`npm run campaign --
 * --target kafka`): the campaign's Kafka writers and readers against three
 * Apache Kafka 4.4 nodes (test/support/apache-kafka-cluster.ts: KRaft in
 * combined roles, replication factor 3, min.insync.replicas 2; the writers
 * use acks=all) while the scheduler picks among Kafka's faults
 * (./kafka-faults.ts), judged by the same checker with the same last line.
 *
 * The same writers as the gateway's run (./campaign.ts): librdkafka
 * idempotent producers, the Java client's idempotent producer, the
 * librdkafka transactional producer with every fifth transaction aborted,
 * the consume-transform-produce processor, a classic and a KIP-848 group.
 * Queen HTTP pushes and `once` markers do not apply to Kafka; their share
 * (what is left after the others' half, tenth and quarter) goes to the
 * librdkafka idempotent producers, so N records are N here too.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiKey } from '../../protocol/api-keys.js';
import { startApacheKafkaCluster, type ApacheKafkaCluster } from '../support/apache-kafka-cluster.js';
import { waitFor, within } from '../support/eventually.js';
import { RawConnection } from '../support/raw-connection.js';
import { createTopic } from '../support/rdkafka.js';
import { transformValue, type CampaignResult } from './campaign.js';
import { anomalies, check, detailLines, finalLine } from './checker.js';
import { describeFaults, scheduleFaults } from './faults.js';
import { emptyHistory, type CampaignHistory } from './history.js';
import { KAFKA_FAULTS_NOT_APPLYING, kafkaFaults } from './kafka-faults.js';
import { runJavaIdempotent, runRdkafkaIdempotent, runTransactional } from './producers.js';
import { committedOffsets, highWatermarks, readLog, startGroup, startProcessor, waitForGroupsToCatchUp, type CampaignGroup } from './readers.js';

export interface KafkaCampaignOptions {
  records: number;
  minutes: number;
  seed: number;
  say(line: string): void;
}

const PARTITIONS = 6;
const TX_PARTITIONS = 3;

export async function runKafkaCampaign(o: KafkaCampaignOptions): Promise<CampaignResult> {
  o.say('target: Apache Kafka, three KRaft nodes in combined roles, replication factor 3, min.insync.replicas 2, acks=all');
  o.say('not applying to Kafka: Queen HTTP pushes and once markers (their share goes to the librdkafka idempotent producers)');
  o.say(`faults not applying to Kafka: ${KAFKA_FAULTS_NOT_APPLYING}`);
  const cluster = await startCluster(o.say);
  o.say(`Apache Kafka ${cluster.version} on ${cluster.bootstrap}`);
  try {
    await warmCoordinators(cluster);
    return await underKafkaFaults(cluster, o);
  } finally {
    keepNodeLogs(cluster, o.say);
    await cluster.stop().catch(() => {});
  }
}

/**
 * A loaded machine (load average 30-60) starts three JVMs and elects the
 * quorum slowly: up to 300 s for Metadata, and a broker waits as long for
 * its first registration with the quorum (Kafka's own 60 s ended a node at
 * load 60). Those two settings only concern a start; the cluster's timeouts
 * under faults are Kafka's defaults. A start that failed anyway is tried
 * once more.
 */
async function startCluster(say: (line: string) => void): Promise<ApacheKafkaCluster> {
  const options = { nodes: 3, startTimeoutMs: 300_000, config: { 'initial.broker.registration.timeout.ms': 300_000 } };
  try {
    return await startApacheKafkaCluster(options);
  } catch (e) {
    say(`Apache Kafka did not start; trying once more: ${(e as Error).message.split('\n')[0]}`);
    return startApacheKafkaCluster(options);
  }
}

/**
 * Kafka creates __consumer_offsets and __transaction_state on the first
 * FindCoordinator; a cluster in use has them, so they are made before the
 * first fault (test/differential/cluster.test.ts does the same).
 */
async function warmCoordinators(cluster: ApacheKafkaCluster): Promise<void> {
  for (const keyType of [0, 1]) {
    await waitFor(
      async () => {
        const raw = await RawConnection.open(cluster.nodes[0]!.port);
        try {
          return (await raw.request(ApiKey.FindCoordinator, 3, { key: 'campaign-warm-up', keyType }, 5_000)).errorCode === 0;
        } finally {
          raw.destroy();
        }
      },
      { what: `FindCoordinator (key type ${keyType}) to name a coordinator`, timeoutMs: 120_000, intervalMs: 500, describe: () => cluster.describe() },
    );
  }
}

function keepNodeLogs(cluster: ApacheKafkaCluster, say: (line: string) => void): void {
  const dir = join('.tmp', `campaign-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  for (const n of cluster.nodes) writeFileSync(join(dir, `${n.name.replaceAll(' ', '-')}.log`), n.logs.lines.join('\n') + '\n');
  say(`Kafka's logs kept in ${dir}`);
}

/** Long because it is the campaign's one timeline, as ./campaign.ts's: start, write under faults, catch up, read back, judge. */
async function underKafkaFaults(cluster: ApacheKafkaCluster, o: KafkaCampaignOptions): Promise<CampaignResult> {
  const history: CampaignHistory = emptyHistory();
  const bootstrap = cluster.bootstrap;
  const run = `k${Date.now().toString(36)}`;
  const topics = { input: `${run}-in`, output: `${run}-out`, txn: `${run}-txn` };
  await createTopic(bootstrap, topics.input, PARTITIONS);
  await createTopic(bootstrap, topics.output, PARTITIONS);
  await createTopic(bootstrap, topics.txn, TX_PARTITIONS);
  const endAt = Date.now() + o.minutes * 60_000;
  const stopped = () => Date.now() > endAt;
  const errors: string[] = [];
  const onError = (line: string) => {
    errors.push(line);
    if (errors.length <= 40) o.say(`client: ${line.slice(0, 300)}`);
  };
  const logDir = join('.tmp', `campaign-${process.pid}`);
  mkdirSync(logDir, { recursive: true });
  const keepClientLog = (name: string, text: string) => writeFileSync(join(logDir, name), text + '\n');
  const base = { bootstrap, stopped, history, onError, keepClientLog };
  const share = (fraction: number) => Math.max(1, Math.floor(o.records * fraction));
  const rdkafkaShare = o.records - share(0.1) - share(0.25);

  const groups: CampaignGroup[] = [
    await startGroup(bootstrap, topics.input, `${run}-classic`, 'classic', 2, keepClientLog),
    await startGroup(bootstrap, topics.input, `${run}-kip848`, 'consumer', 2, keepClientLog),
  ];
  const processor = startProcessor(bootstrap, topics.input, topics.output, PARTITIONS, transformValue, (o.minutes + 8) * 60_000);
  history.transforms.push({ input: topics.input, output: topics.output, transform: transformValue });
  const faults = scheduleFaults(kafkaFaults(cluster), o.seed, o.say);
  const progress = setInterval(() => {
    const acked = history.writes.filter((w) => w.outcome === 'acknowledged').length + history.transactions.filter((t) => t.outcome === 'committed').reduce((n, t) => n + t.values.length, 0);
    o.say(`progress: ${acked} acknowledged, ${faults.log.total} faults; ${processor.processor.describe()}; groups read ${groups.map((g) => g.history.reads.length).join(', ')}`);
  }, 15_000);
  try {
    await Promise.all([
      runRdkafkaIdempotent({ ...base, topic: topics.input, partitions: PARTITIONS, records: rdkafkaShare, chunk: 500, keys: 12 }),
      runJavaIdempotent({ ...base, topic: topics.input, partitions: PARTITIONS, records: share(0.1), chunk: Math.min(2_000, share(0.1)), keys: 6 }),
      runTransactional({ ...base, topic: topics.txn, partitions: TX_PARTITIONS, records: share(0.25), chunk: 25, keys: 6, transactionalId: `${run}-writer` }),
    ]);
    o.say('writers done; stopping the faults');
    await within(faults.stop(), 300_000, 'the fault running to finish');

    const ends = await highWatermarks(bootstrap, topics.input, PARTITIONS);
    processor.finish(ends);
    await waitForGroupsToCatchUp(groups, topics.input, ends, (line) => o.say(line));
    await within(processor.run, (o.minutes + 8) * 60_000, 'the processor to reach the input end').catch((e: Error) => o.say(`processor: ${e.message}`));
    o.say(`the processor ran ${processor.processor.describe()}`);
    for (const g of groups) await g.close();
    history.groups.push(...groups.map((g) => g.history));
    for (const g of groups) g.history.final = await committedOffsets(bootstrap, g.history.group, topics.input, PARTITIONS);
    for (const [topic, partitions] of [[topics.input, PARTITIONS], [topics.output, PARTITIONS], [topics.txn, TX_PARTITIONS]] as const) {
      history.logs.push({ topic, records: await readLog(bootstrap, topic, partitions, 180_000) });
    }
  } finally {
    clearInterval(progress);
    await faults.stop();
    processor.processor.stop();
    for (const g of groups) await g.close();
  }
  const verdict = check(history);
  o.say(`faults: ${describeFaults(faults.log)}`);
  o.say(`clients saw ${errors.length} errors (retried or counted as uncertain writes): ${errorKinds(errors)}`);
  const outcomes = ['committed', 'aborted', 'uncertain'].map((outcome) => `${history.transactions.filter((t) => t.outcome === outcome).length} ${outcome}`);
  o.say(`transactions: ${outcomes.join(', ')}`);
  for (const line of detailLines(verdict)) o.say(line);
  // Kafka has no PostgreSQL primary: the last line keeps the gateway's form with 0 there.
  const line = finalLine(verdict, faults.log.total, 0);
  return { verdict, faults: faults.log, line, clean: anomalies(verdict) === 0 };
}

/** The clients' errors counted by the call that failed, for the figures (the first 40 are printed as they happen). */
function errorKinds(errors: readonly string[]): string {
  const kinds = new Map<string, number>();
  for (const line of errors) {
    const call = /(initTransactions|beginTransaction|commitTransaction|abortTransaction|delivery errors|Java client's produce|to connect)/.exec(line)?.[1] ?? 'other';
    kinds.set(call, (kinds.get(call) ?? 0) + 1);
  }
  return [...kinds].sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${n} ${kind}`).join(', ') || 'none';
}
