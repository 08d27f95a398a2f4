/**
 * One fault campaign, start to verdict: a cluster rig (test/support/
 * cluster.ts: PostgreSQL, Redis, two cores, three gateways serving Kafka and
 * Queen's HTTP API), the writers (./producers.ts, ./http-writers.ts) and
 * readers (./readers.ts) running while the scheduler (./faults.ts) injects
 * faults, then the faults stopped, the readers let catch up, every topic read
 * back with read_committed, and the history judged (./checker.ts).
 *
 * The records are shared out: half to librdkafka idempotent producers, a
 * tenth to the Java client's, a quarter to transactions, the rest to HTTP
 * pushes. Writers stop at `records` or when `minutes` are up, whichever
 * comes first.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep, waitFor, within } from '../support/eventually.js';
import { startClusterRig, type ClusterRig } from '../support/cluster.js';
import { createTopic } from '../support/rdkafka.js';
import { anomalies, check, detailLines, finalLine, type Verdict } from './checker.js';
import { describeFaults, startFaults, type Fault, type FaultLog } from './faults.js';
import { emptyHistory, type CampaignHistory } from './history.js';
import { configureQueue, runHttpPushes, runOnceMarkers } from './http-writers.js';
import { networkFaultsMissing, startRedisBehindLink, type RedisLink } from './network.js';
import { runJavaIdempotent, runRdkafkaIdempotent, runTransactional } from './producers.js';
import { committedOffsets, readLog, startGroup, startProcessor, highWatermarks, waitForGroupsToCatchUp, type CampaignGroup } from './readers.js';
import { startShareGroup } from './share-group.js';

export interface CampaignOptions {
  records: number;
  minutes: number;
  seed: number;
  database: { url: string; schema: string };
  /** A share group of Kafka 4.4 KafkaShareConsumers reads the input too (./share-group.ts); true unless false. */
  shareGroup?: boolean;
  /** The replicated store's faults (./store-faults.ts) when `database` is the pg_auto_failover rig. */
  storeFaults?: Fault[];
  say(line: string): void;
}

export interface CampaignResult {
  verdict: Verdict;
  faults: FaultLog;
  /** The campaign's last line. */
  line: string;
  clean: boolean;
}

const PARTITIONS = 6;
const TX_PARTITIONS = 3;
const HTTP_PARTITIONS = 2;
/** HTTP pushes in flight at once, each lane one after another. */
const HTTP_LANES = 4;
/**
 * From this many records on, transactions of 100 records and pushes of 20
 * messages, so the million's transactional and HTTP shares are written within
 * the minutes on a busy machine (at 25 and 1 they wrote about 30 records a second).
 */
const LARGE_RUN = 100_000;

export const transformValue = (value: string): string => `copied:${value}`;

export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const missing = networkFaultsMissing();
  if (missing) o.say(`network faults off: ${missing}`);
  const link: RedisLink | null = missing ? null : await startRedisBehindLink(1 + (process.pid % 200), 16_000 + (process.pid % 1000));
  let rig: ClusterRig | null = null;
  try {
    rig = await startClusterRig({ database: o.database, gatewayCores: [0, 1, 0], http: true, ...(link ? { redis: link.redis } : {}) });
    return await underFaults(rig, link, o);
  } finally {
    if (rig) keepLogs(rig, o.say);
    await rig?.stop().catch(() => {});
    await link?.remove();
  }
}

/** Every process's whole log, for the post-mortem of an anomaly: .tmp/campaign-<pid>/<process>.log. */
function keepLogs(rig: ClusterRig, say: (line: string) => void): void {
  const dir = join('.tmp', `campaign-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  for (const p of [...rig.cores, ...rig.gateways]) writeFileSync(join(dir, `${p.name.replace(' ', '-')}.log`), p.logs.lines.join('\n') + '\n');
  say(`process logs kept in ${dir}`);
}

/** Long because it is the campaign's one timeline: start, write under faults, catch up, read back, judge. */
async function underFaults(rig: ClusterRig, link: RedisLink | null, o: CampaignOptions): Promise<CampaignResult> {
  const history: CampaignHistory = emptyHistory();
  const run = `c${Date.now().toString(36)}`;
  const topics = { input: `${run}-in`, output: `${run}-out`, txn: `${run}-txn`, queue: `${run}-queue` };
  await createTopic(rig.bootstrap, topics.input, PARTITIONS);
  await createTopic(rig.bootstrap, topics.output, PARTITIONS);
  await createTopic(rig.bootstrap, topics.txn, TX_PARTITIONS);
  // The minutes count from when the readers are up and the writers and faults start (JVMs take a while to start on a busy machine).
  let endAt = Number.POSITIVE_INFINITY;
  const stopped = () => Date.now() > endAt;
  const errors: string[] = [];
  const onError = (line: string) => {
    errors.push(line);
    if (errors.length <= 40) o.say(`client: ${line.slice(0, 300)}`);
  };
  const httpUrls = () => rig.gateways.filter((g) => g.running && g.httpUrl).map((g) => g.httpUrl!);
  const logDir = join('.tmp', `campaign-${process.pid}`);
  mkdirSync(logDir, { recursive: true });
  const keepClientLog = (name: string, text: string) => writeFileSync(join(logDir, name), text + '\n');
  const base = { bootstrap: rig.bootstrap, stopped, history, onError, keepClientLog };
  const share = (fraction: number) => Math.max(1, Math.floor(o.records * fraction));
  const large = o.records >= LARGE_RUN;
  const httpOptions = { urls: httpUrls, queue: topics.queue, partitions: HTTP_PARTITIONS, records: o.records - share(0.5) - share(0.1) - share(0.25), keys: 4, keyPrefix: 'h', perPush: large ? 20 : 1, stopped, history, onError };
  const lanes = Math.min(HTTP_LANES, httpOptions.records);
  const httpLanes = Array.from({ length: lanes }, (_, lane) => ({ ...httpOptions, keyPrefix: `h${lane}.`, records: Math.floor(httpOptions.records / lanes) + (lane < httpOptions.records % lanes ? 1 : 0) }));
  await configureQueue(httpOptions);

  const groups: CampaignGroup[] = [
    await startGroup(rig.bootstrap, topics.input, `${run}-classic`, 'classic', 2, keepClientLog),
    await startGroup(rig.bootstrap, topics.input, `${run}-kip848`, 'consumer', 2, keepClientLog),
  ];
  const shareGroup = o.shareGroup === false ? null : await startShareGroup(rig.bootstrap, topics.input, `${run}-share`, 2, keepClientLog);
  // The processor copies the input in transactions of 100 and is the last to finish on a large run: half the minutes again and ten more.
  const processorMs = (o.minutes * 1.5 + 10) * 60_000;
  const processor = startProcessor(rig.bootstrap, topics.input, topics.output, PARTITIONS, transformValue, processorMs);
  history.transforms.push({ input: topics.input, output: topics.output, transform: transformValue });
  endAt = Date.now() + o.minutes * 60_000;
  // Once, halfway through the minutes: a member SIGKILLed holding its locks, its records redelivered to the others.
  const shareKill = setTimeout(() => void shareGroup?.killOne().then(() => o.say('share group: a member SIGKILLed, another started')), (o.minutes * 60_000) / 2);
  const faults = startFaults({ rig, link, storeFaults: o.storeFaults ?? [] }, o.seed, o.say);
  const progress = setInterval(() => {
    const acked = history.writes.filter((w) => w.outcome === 'acknowledged').length + history.transactions.filter((t) => t.outcome === 'committed').reduce((n, t) => n + t.values.length, 0);
    o.say(`progress: ${acked} acknowledged, ${faults.log.total} faults; ${processor.processor.describe()}; groups read ${groups.map((g) => g.history.reads.length).join(', ')}${shareGroup ? `; share group got ${shareGroup.history.deliveries.length}` : ''}`);
  }, 15_000);
  try {
    await Promise.all([
      runRdkafkaIdempotent({ ...base, topic: topics.input, partitions: PARTITIONS, records: share(0.5), chunk: 500, keys: 12 }),
      runJavaIdempotent({ ...base, topic: topics.input, partitions: PARTITIONS, records: share(0.1), chunk: Math.min(2_000, share(0.1)), keys: 6 }),
      runTransactional({ ...base, topic: topics.txn, partitions: TX_PARTITIONS, records: share(0.25), chunk: large ? 100 : 25, keys: 6, transactionalId: `${run}-writer` }),
      ...httpLanes.map(runHttpPushes),
      runOnceMarkers({ urls: httpUrls, stopped, history, onError }, `${run}-once`, Math.max(5, Math.floor(o.records / 200))),
    ]);
    o.say('writers done; stopping the faults');
    await within(faults.stop(), 120_000, 'the fault running to finish');
    await rig.converged();

    const ends = await highWatermarks(rig.bootstrap, topics.input, PARTITIONS);
    processor.finish(ends);
    await waitForGroupsToCatchUp(groups, topics.input, ends, (line) => o.say(line));
    const acknowledgedInput = history.writes.filter((w) => w.topic === topics.input && w.outcome === 'acknowledged').map((w) => w.value);
    if (shareGroup) {
      await waitFor(() => shareGroup.settled(acknowledgedInput), { what: `the share group to get and acknowledge all ${acknowledgedInput.length} acknowledged records of ${topics.input}`, timeoutMs: Math.max(180_000, o.minutes * 30_000), intervalMs: 2_000 }).catch((e: Error) => o.say(e.message));
      await shareGroup.close();
      o.say(`share group: ${shareGroup.describe()}`);
      history.shareGroups.push(shareGroup.history);
    }
    await within(processor.run, processorMs, 'the processor to reach the input end').catch((e: Error) => o.say(`processor: ${e.message}`));
    o.say(`the processor ran ${processor.processor.describe()}`);
    for (const g of groups) await g.close();
    // Commits acknowledged after close are kept; the histories are complete now.
    history.groups.push(...groups.map((g) => g.history));
    for (const g of groups) g.history.final = await committedOffsets(rig.bootstrap, g.history.group, topics.input, PARTITIONS);
    for (const [topic, partitions] of [[topics.input, PARTITIONS], [topics.output, PARTITIONS], [topics.txn, TX_PARTITIONS], [topics.queue, HTTP_PARTITIONS]] as const) {
      history.logs.push({ topic, records: await readLog(rig.bootstrap, topic, partitions, 180_000) });
    }
  } finally {
    clearInterval(progress);
    clearTimeout(shareKill);
    await faults.stop();
    await shareGroup?.close();
    processor.processor.stop();
    for (const g of groups) await g.close();
  }
  const verdict = check(history);
  o.say(`faults: ${describeFaults(faults.log)}`);
  o.say(`clients saw ${errors.length} errors (retried or counted as uncertain writes)`);
  for (const line of detailLines(verdict)) o.say(line);
  await sleep(0);
  const line = finalLine(verdict, faults.log.total, faults.log.primary);
  return { verdict, faults: faults.log, line, clean: anomalies(verdict) === 0 };
}
