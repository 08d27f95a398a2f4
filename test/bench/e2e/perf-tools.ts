/**
 * Apache Kafka's own benchmark clients as the third client pair:
 * `org.apache.kafka.tools.ProducerPerformance` and `ConsumerPerformance`
 * from the kafka-tools jar, the classes `kafka-producer-perf-test.sh` and
 * `kafka-consumer-perf-test.sh` run, started with `java -cp '<libs>/*'` from
 * the Apache Kafka install the launcher fetched.
 *
 * Neither tool runs for a given time (both take a record count), so each is
 * started with a count it will not reach, its progress lines are read every
 * 500 ms, and it is stopped once the phase is over. The figures come from
 * those lines, which the tools compute themselves:
 * - ProducerPerformance prints, per interval, the records whose send
 *   callback completed (acknowledged, with acks=all) and their rate; the
 *   interval's length is records ÷ rate. Intervals that end in the warm-up
 *   are left out.
 * - ConsumerPerformance with --show-detailed-stats prints a timestamp and the
 *   records consumed so far; the clock starts at the first line with records
 *   (group join and the first fetch are not throughput), as for the other
 *   clients.
 *
 * Producer settings, those of the librdkafka producer where they map:
 * acks=all, linger.ms=5, batch.size=1000000 (per-partition batch bytes in
 * both clients), compression.type=none, enable.idempotence=false (the Java
 * client's default is true), records spread round-robin over the partitions
 * (RoundRobinPartitioner; the records have no key). librdkafka's
 * batch.num.messages has no Java equivalent; buffer.memory stays at the Java
 * default (32 MiB). The JVM options are the ones the two shell scripts use
 * (a 512 MiB heap, G1).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { SETPRIV } from '../../support/apache-kafka.js';

/** What kafka-producer-perf-test.sh / kafka-consumer-perf-test.sh and kafka-run-class.sh give the JVM. */
export const PERF_TOOL_JVM_OPTIONS = [
  '-Xmx512M', '-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent', '-XX:MaxInlineLevel=15', '-Djava.awt.headless=true',
  // The clients' warnings (a broker that closes the connection, a topic missing from Metadata) into the output, for an error message.
  '-Dorg.apache.logging.log4j.level=WARN',
];
/** How long the producer may take to get its first acknowledgement (JVM start, Metadata) before the phase fails. */
const FIRST_ACK_TIMEOUT_MS = 45_000;
/** Added to the consumer's deadline for the JVM's start: on a loaded machine a consumer read nothing in 33 s, and 10 s after its start in the next run. */
const JVM_START_SECONDS = 20;

export const PERF_PRODUCER_PROPERTIES: Record<string, string | number | boolean> = {
  'acks': 'all',
  'linger.ms': 5,
  'batch.size': 1_000_000,
  'compression.type': 'none',
  'enable.idempotence': false,
  'partitioner.class': 'org.apache.kafka.clients.producer.RoundRobinPartitioner',
  'client.id': 'queen-bench',
};

const REPORTING_INTERVAL_MS = 500;
/**
 * A fresh JVM interprets before it compiles: the producer ran at 6,000, then
 * 36,000, then 82,000 records/s in its first three seconds here. It gets this
 * much warm-up beyond the other clients', and the same measured length.
 */
export const JVM_WARMUP_SECONDS = 2;
/** A count neither tool reaches within a phase: the phase ends by time. */
const UNREACHABLE = 1_000_000_000_000;
const DATE_FORMAT = 'yyyy-MM-dd HH:mm:ss:SSS';

/** One interval line of ProducerPerformance: records acknowledged in it and their rate. */
export interface ProducerInterval {
  records: number;
  recordsPerSecond: number;
}

const PRODUCER_INTERVAL = /^(\d+) records sent, ([\d.]+) records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency\.$/;

/**
 * "159302 records sent, 158825.5 records/sec (15.15 MB/sec), 42.0 ms avg
 * latency, 482.0 ms max latency." Null for anything else, including the
 * closing summaries, which carry percentiles.
 */
export function parseProducerInterval(line: string): ProducerInterval | null {
  const match = PRODUCER_INTERVAL.exec(line.trim());
  return match ? { records: Number(match[1]), recordsPerSecond: Number(match[2]) } : null;
}

/** One detailed line of ConsumerPerformance: when, and records consumed so far. */
export interface ConsumerProgress {
  /** The tool's clock in ms (its local time read as UTC: only differences are used). */
  atMs: number;
  records: number;
}

const CONSUMER_PROGRESS = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d):(\d{3}), \d+, [\d.]+, [\d.]+, (\d+), [\d.]+, /;

/**
 * "2026-12-01 00:40:22:359, 0, 5.5750, 10.9312, 58458, 114621.5686, 0, 510,
 * 10.9312, 114621.5686" (time, thread, MB so far, MB/s, records so far,
 * records/s, ...). Null for the header and anything else.
 */
export function parseConsumerProgress(line: string): ConsumerProgress | null {
  const m = CONSUMER_PROGRESS.exec(line.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number) as [number, number, number, number, number, number, number];
  return { atMs: Date.UTC(year, month - 1, day, hour, minute, second, ms), records: Number(m[8]) };
}

/** The acknowledged records of the intervals after the warm-up, over their summed lengths. */
export function producerFigures(intervals: ProducerInterval[]): { counted: number; seconds: number } {
  return intervals.reduce((sum, i) => ({ counted: sum.counted + i.records, seconds: sum.seconds + (i.recordsPerSecond > 0 ? i.records / i.recordsPerSecond : 0) }), { counted: 0, seconds: 0 });
}

/** Records after the first delivery over the time since it, as the other clients count a consume phase. */
export function consumerFigures(first: ConsumerProgress, last: ConsumerProgress): { records: number; seconds: number; recordsPerSecond: number } {
  const seconds = Math.max(last.atMs - first.atMs, 1) / 1000;
  return { records: last.records, seconds, recordsPerSecond: (last.records - first.records) / seconds };
}

const lastLines = (tail: string) => tail.split('\n').slice(-4).join(' | ') || '(it printed nothing)';

interface ToolRun {
  /** Stops the tool (the phase is over); resolves once it has exited, with its last output. */
  stop(): Promise<{ code: number | null; tail: string }>;
  /** Resolves when the tool exits by itself, with its last output for an error message. */
  exited: Promise<{ code: number | null; tail: string }>;
}

/** Runs one of the tools, handing each output line to `onLine`. */
function runTool(libs: string, mainClass: string, args: string[], onLine: (line: string) => void): ToolRun {
  const command = ['java', ...PERF_TOOL_JVM_OPTIONS, '-cp', join(libs, '*'), mainClass, ...args];
  // The runner SIGKILLs a client past its deadline, and no exit handler runs then: the kernel's
  // parent-death signal (setpriv) takes the JVM with it (two orphans outlived their clients before).
  const child = SETPRIV
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', ...command], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-2000);
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      onLine(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (tail = (tail + chunk).slice(-2000)));
  const exited = new Promise<{ code: number | null; tail: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, tail: tail.trim() }));
  });
  // And when this process ends on its own (an error, the phase over) without stopping the tool.
  process.once('exit', () => child.kill('SIGKILL'));
  return {
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
  };
}

export interface PerfProduceJob {
  libs: string;
  bootstrap: string;
  topic: string;
  recordBytes: number;
  seconds: number;
  warmupSeconds: number;
}

type Emit = (message: object) => void;

/**
 * Produces flat out for `seconds` (plus the JVM's warm-up) from the first
 * acknowledgement; the intervals ending in the first `warmupSeconds` (plus
 * the JVM's) are not counted.
 */
export function perfProduce(job: PerfProduceJob, emit: Emit): Promise<{ acked: number; counted: number; seconds: number; recordsPerSecond: number; failed: number }> {
  const properties = Object.entries(PERF_PRODUCER_PROPERTIES).map(([k, v]) => `${k}=${String(v)}`);
  const args = [
    '--bootstrap-server', job.bootstrap, '--topic', job.topic, '--num-records', String(UNREACHABLE), '--record-size', String(job.recordBytes),
    '--throughput', '-1', '--reporting-interval', String(REPORTING_INTERVAL_MS), '--command-property', ...properties,
  ];
  return new Promise((resolve, reject) => {
    let started = 0;
    let measuring = false;
    let acked = 0;
    const counted: ProducerInterval[] = [];
    let done = false;
    const nothing = setTimeout(() => {
      done = true;
      void tool.stop().then(({ tail }) => reject(new Error(`kafka-producer-perf-test had no record acknowledged ${FIRST_ACK_TIMEOUT_MS / 1000} s after it started: ${lastLines(tail)}`)));
    }, FIRST_ACK_TIMEOUT_MS);
    const tool = runTool(job.libs, 'org.apache.kafka.tools.ProducerPerformance', args, (line) => {
      const interval = parseProducerInterval(line);
      if (!interval || done) return;
      clearTimeout(nothing);
      const at = performance.now();
      acked += interval.records;
      emit({ progress: acked });
      if (started === 0) started = at;
      if (measuring) counted.push(interval);
      else if (at - started >= (job.warmupSeconds + JVM_WARMUP_SECONDS) * 1000) {
        measuring = true;
        emit({ window: 'start' });
      }
      if (at - started >= (job.seconds + JVM_WARMUP_SECONDS) * 1000) {
        done = true;
        emit({ window: 'end' });
        const { counted: records, seconds } = producerFigures(counted);
        void tool.stop().then(() => resolve({ acked, counted: records, seconds, recordsPerSecond: records / seconds, failed: 0 }));
      }
    });
    void tool.exited.then(({ code, tail }) => {
      if (done) return;
      done = true;
      clearTimeout(nothing);
      reject(new Error(`kafka-producer-perf-test (ProducerPerformance) exited with ${code} before the phase ended: ${lastLines(tail)}`));
    }, reject);
  });
}

export interface PerfConsumeJob {
  libs: string;
  bootstrap: string;
  topic: string;
  count: number;
  seconds: number;
  timeoutSeconds: number;
  from: 'earliest' | 'latest';
}

/**
 * Reads in a new consumer group until `count` records or `seconds` after the
 * first delivery; nothing at all within `timeoutSeconds` is a failure.
 */
export function perfConsume(job: PerfConsumeJob, emit: Emit): Promise<{ records: number; seconds: number; recordsPerSecond: number; firstRecordAfterMs: number }> {
  const args = [
    '--bootstrap-server', job.bootstrap, '--topic', job.topic, '--num-records', String(UNREACHABLE), '--show-detailed-stats',
    '--reporting-interval', String(REPORTING_INTERVAL_MS), '--date-format', DATE_FORMAT, '--timeout', String((job.timeoutSeconds + JVM_START_SECONDS) * 1000),
    '--group', `queen-bench-${process.pid}-${Date.now().toString(36)}`, '--command-property', 'client.id=queen-bench',
    ...(job.from === 'latest' ? ['--from-latest'] : []),
  ];
  const began = performance.now();
  return new Promise((resolve, reject) => {
    let first: ConsumerProgress | null = null;
    let firstAt = 0;
    let last: ConsumerProgress | null = null;
    let done = false;
    let window: NodeJS.Timeout | undefined;
    const finish = () => {
      done = true;
      clearTimeout(deadline);
      clearTimeout(window);
      emit({ window: 'end' });
      void tool.stop().then(() => resolve({ ...consumerFigures(first!, last!), firstRecordAfterMs: firstAt - began }));
    };
    const deadline = setTimeout(() => {
      if (first) finish();
      else {
        done = true;
        void tool.stop().then(({ tail }) => reject(new Error(`kafka-consumer-perf-test read nothing from ${job.topic} in ${job.timeoutSeconds + JVM_START_SECONDS} s: ${lastLines(tail)}`)));
      }
    }, (job.timeoutSeconds + JVM_START_SECONDS) * 1000);
    const tool = runTool(job.libs, 'org.apache.kafka.tools.ConsumerPerformance', args, (line) => {
      const progress = parseConsumerProgress(line);
      if (!progress || progress.records === 0 || done) return;
      last = progress;
      emit({ progress: progress.records });
      if (!first) {
        first = progress;
        firstAt = performance.now();
        emit({ window: 'start' });
        // The tool prints only when a poll returns records, so once the topic is read to its end no line comes: the clock ends the phase.
        window = setTimeout(finish, job.seconds * 1000);
      }
      if (progress.records >= job.count) finish();
    });
    void tool.exited.then(({ code, tail }) => {
      if (done) return;
      if (first && last !== first) finish();
      else {
        done = true;
        clearTimeout(deadline);
        clearTimeout(window);
        reject(new Error(`kafka-consumer-perf-test (ConsumerPerformance) exited with ${code} having read ${last?.records ?? 0} records: ${lastLines(tail)}`));
      }
    }, reject);
  });
}
