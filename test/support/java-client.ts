/**
 * Apache Kafka's Java client (kafka-clients, the version of the reference
 * broker) as the end-to-end suite drives it: the driver in test/java-client,
 * run as a child process per producer, consumer or admin session, speaking
 * JSON lines (see JavaClientDriver.java for the commands and lines).
 *
 * The driver is built into .cache/java-client by scripts/apache-kafka-fetch.sh,
 * which this runs once per process (at once when the build is current).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { runFetchScript } from './apache-kafka.js';
import { waitFor } from './eventually.js';

const JVM_OPTIONS = [
  '-Xmx128m',
  '-XX:+UseSerialGC',
  // Short-lived clients: the quick compiler only, less CPU spent starting up on a busy machine.
  '-XX:TieredStopAtLevel=1',
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
];
const MAIN_CLASS = 'queen.gateway.javaclient.JavaClientDriver';

let classpath: Promise<string> | null = null;

function driverClasspath(): Promise<string> {
  classpath ??= runFetchScript('java-client', 'java_client').catch((e: unknown) => {
    classpath = null;
    throw e;
  });
  return classpath;
}

/** Client settings by their Java names ("linger.ms": 5). */
export type JavaConfig = Record<string, string | number | boolean>;

export interface JavaError {
  /** The exception's simple class name, e.g. "TopicExistsException". */
  type: string;
  message: string | null;
}

/** One JSON line of the driver; which fields it has depends on `event`. */
export interface DriverLine {
  event: string;
  [field: string]: unknown;
}

interface DriverRun {
  child: ChildProcess;
  lines: DriverLine[];
  /** stderr, for failure messages: kafka-clients' warnings. */
  stderr(): string;
  exited: Promise<number | null>;
}

async function runDriver(command: 'produce' | 'consume' | 'admin' | 'transact', settings: object): Promise<DriverRun> {
  const cp = await driverClasspath();
  const child = spawn('java', [...JVM_OPTIONS, '-cp', cp, MAIN_CLASS, command, JSON.stringify(settings)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: DriverLine[] = [];
  let partial = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) if (line.trim() !== '') lines.push(JSON.parse(line) as DriverLine);
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  // A test that throws leaves no client behind: stdin's end stops a consumer, and this the rest.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      process.removeListener('exit', killOnExit);
      resolve(code);
    });
  });
  return { child, lines, stderr: () => stderr, exited };
}

/** Runs a command to its end; fails, with what the driver said, if it exits non-zero. */
async function runToEnd(command: 'produce' | 'admin' | 'transact', settings: object, timeoutMs: number): Promise<DriverLine[]> {
  const run = await runDriver(command, settings);
  run.child.stdin!.end();
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  const code = await run.exited;
  clearTimeout(timer);
  if (code !== 0) {
    throw new Error(`the Java client's ${command} exited with ${code ?? 'a signal'} (killed after ${timeoutMs} ms if it ran that long); its lines:\n${run.lines.map((l) => JSON.stringify(l)).join('\n')}\nstderr:\n${run.stderr()}`);
  }
  return run.lines;
}

// ─── produce ─────────────────────────────────────────────────────────────────

export interface JavaRecord {
  partition?: number;
  /** CreateTime in ms; default the producer's clock. */
  timestamp?: number;
  key: string | null;
  value: string | null;
}

export interface JavaSent {
  index: number;
  partition: number;
  offset: number;
  timestamp: number;
}

export interface JavaProduceResult {
  sent: JavaSent[];
  failed: { index: number; error: JavaError }[];
}

/**
 * Sends the records with one idempotent producer (enable.idempotence=true,
 * acks=all unless `config` says otherwise), all in flight before one flush,
 * and answers what the client reported for each.
 */
export async function javaProduce(bootstrap: string, topic: string, records: readonly JavaRecord[], config: JavaConfig = {}): Promise<JavaProduceResult> {
  const lines = await runToEnd('produce', { bootstrap, clientId: 'queen-e2e-java-producer', topic, records, config }, 120_000);
  return {
    sent: lines.filter((l) => l.event === 'sent') as unknown as JavaSent[],
    failed: lines.filter((l) => l.event === 'failed') as unknown as JavaProduceResult['failed'],
  };
}

/** A producer still running: its lines as they come (JavaClientDriver's produce with intervalMs). */
export interface JavaProducerRun {
  readonly lines: readonly DriverLine[];
  /** Waits for the end; fails, with what the driver said, if it exits non-zero. */
  finished(timeoutMs?: number): Promise<JavaProduceResult>;
}

/**
 * Sends the records one at a time, each waited for and reported at once,
 * with a pause of `intervalMs` after each: a producer that outlives SASL
 * sessions, which the test can watch and act on while it runs.
 */
export async function startJavaProduce(bootstrap: string, topic: string, records: readonly JavaRecord[], intervalMs: number, config: JavaConfig = {}): Promise<JavaProducerRun> {
  const run = await runDriver('produce', { bootstrap, clientId: 'queen-e2e-java-producer', topic, records, intervalMs, config });
  run.child.stdin!.end();
  return {
    lines: run.lines,
    async finished(timeoutMs = 120_000) {
      const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
      const code = await run.exited;
      clearTimeout(timer);
      if (code !== 0) throw new Error(`the Java client's produce exited with ${code ?? 'a signal'}; its lines:\n${run.lines.map((l) => JSON.stringify(l)).join('\n')}\nstderr:\n${run.stderr()}`);
      return {
        sent: run.lines.filter((l) => l.event === 'sent') as unknown as JavaSent[],
        failed: run.lines.filter((l) => l.event === 'failed') as unknown as JavaProduceResult['failed'],
      };
    },
  };
}

// ─── transact ────────────────────────────────────────────────────────────────

export interface JavaTransactionStep {
  action: 'commit' | 'abort';
  records: { partition: number; key: string | null; value: string }[];
  /** Offsets for the driver's groupId, sent with the transaction. */
  offsets?: { topic: string; partition: number; offset: number }[];
}

export interface JavaTransactionsSpec {
  topic: string;
  transactionalId: string;
  groupId: string;
  steps: JavaTransactionStep[];
  /** After the steps: a second instance with the same transactional id fences this one (JavaClientDriver.fence). */
  fence?: boolean;
  config?: JavaConfig;
}

/** Runs the transactions with one transactional KafkaProducer; answers the driver's lines. */
export async function javaTransactions(bootstrap: string, spec: JavaTransactionsSpec): Promise<DriverLine[]> {
  return runToEnd('transact', { bootstrap, clientId: 'queen-e2e-java-transactions', ...spec }, 120_000);
}

// ─── admin ───────────────────────────────────────────────────────────────────

export type AdminOp =
  | { op: 'createTopics'; topics: { name: string; partitions: number; replicationFactor: number }[] }
  | { op: 'deleteTopics'; topics: string[] }
  | { op: 'listTopics'; listInternal?: boolean }
  | { op: 'describeTopics'; topics: string[] }
  | { op: 'describeCluster' }
  | { op: 'listOffsets'; topic: string; partitions: number[]; spec: 'earliest' | 'latest' | 'maxTimestamp' | `${number}` }
  | { op: 'describeConfigs'; topic: string }
  | { op: 'listConsumerGroups' }
  | { op: 'describeConsumerGroups'; groups: string[] }
  | { op: 'listConsumerGroupOffsets'; group: string };

export interface AdminResult {
  op: string;
  /** The operation's answer as the driver shapes it (JavaClientDriver.adminOp). */
  result?: unknown;
  error?: JavaError;
}

/** Runs the operations in order with one Admin client; one result per operation. */
export async function javaAdmin(bootstrap: string, ops: readonly AdminOp[], config: JavaConfig = {}): Promise<AdminResult[]> {
  const lines = await runToEnd('admin', { bootstrap, clientId: 'queen-e2e-java-admin', ops, config }, 120_000);
  return lines.filter((l) => l.event === 'result') as unknown as AdminResult[];
}

// ─── consume ─────────────────────────────────────────────────────────────────

export interface JavaConsumerOptions {
  bootstrap: string;
  topics: string[];
  groupId: string;
  clientId: string;
  /** Stop (and close) after this many records. Default: until stop(). */
  maxRecords?: number;
  /** group.protocol: 'consumer' is KIP-848's (the coordinator assigns). Default the client's, classic. */
  groupProtocol?: 'classic' | 'consumer';
  config?: JavaConfig;
}

export interface JavaConsumed {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
}

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

/** A consumer group member in its own JVM: subscribes at once, commits each record it reads. */
export class JavaConsumer {
  private constructor(
    private readonly run: DriverRun,
    readonly clientId: string,
  ) {}

  static async start(options: JavaConsumerOptions): Promise<JavaConsumer> {
    const { clientId, groupProtocol, config, ...rest } = options;
    const settings = groupProtocol === undefined ? config : { ...config, 'group.protocol': groupProtocol };
    return new JavaConsumer(await runDriver('consume', { ...rest, clientId, ...(settings === undefined ? {} : { config: settings }) }), clientId);
  }

  get lines(): readonly DriverLine[] {
    return this.run.lines;
  }

  get records(): JavaConsumed[] {
    return this.run.lines.filter((l) => l.event === 'record') as unknown as JavaConsumed[];
  }

  /** Offsets committed with success, in order ("offset" is the next to read). */
  get commits(): { topic: string; partition: number; offset: number }[] {
    return this.run.lines.filter((l) => l.event === 'committed') as unknown as { topic: string; partition: number; offset: number }[];
  }

  /** The error that ended the consumer, when one did. */
  get fatalError(): JavaError | null {
    const fatal = this.run.lines.find((l) => l.event === 'fatal');
    return fatal ? (fatal.error as JavaError) : null;
  }

  /** Waits for the driver to exit, however it ends. */
  async exited(timeoutMs = 60_000): Promise<number | null> {
    await waitFor(() => this.hasExited, { what: `${this.clientId} to exit`, timeoutMs, intervalMs: 50, describe: () => this.describe() });
    return this.run.exited;
  }

  get commitFailures(): DriverLine[] {
    return this.run.lines.filter((l) => l.event === 'commit-failed' || l.event === 'fatal');
  }

  /**
   * The partitions held now. Eager assignors revoke everything and assign the
   * whole new set; cooperative ones revoke and add only what moves; taking
   * each callback as a change serves both.
   */
  get assignment(): TopicPartitionRef[] {
    const held = new Map<string, TopicPartitionRef>();
    for (const line of this.run.lines) {
      if (line.event !== 'assigned' && line.event !== 'revoked') continue;
      for (const tp of line.partitions as TopicPartitionRef[]) {
        if (line.event === 'assigned') held.set(`${tp.topic}:${tp.partition}`, tp);
        else held.delete(`${tp.topic}:${tp.partition}`);
      }
    }
    return [...held.values()];
  }

  get hasExited(): boolean {
    return this.run.child.exitCode !== null || this.run.child.signalCode !== null;
  }

  describe(): string {
    return `${this.clientId}: ${this.run.lines.map((l) => JSON.stringify(l)).join('\n  ')}\n  stderr: ${this.run.stderr().trim().split('\n').slice(-15).join('\n  ')}`;
  }

  /** Waits for the driver to close by itself (after maxRecords); fails if it does not. */
  async finished(timeoutMs = 60_000): Promise<void> {
    await waitFor(() => this.hasExited, { what: `${this.clientId} to close after its records`, timeoutMs, intervalMs: 50, describe: () => this.describe() });
    await this.checkExit();
  }

  /** Asks the consumer to close (leaving the group) and waits until it has. */
  async stop(timeoutMs = 60_000): Promise<void> {
    if (!this.hasExited) this.run.child.stdin!.end('stop\n');
    const timer = setTimeout(() => this.run.child.kill('SIGKILL'), timeoutMs);
    await this.run.exited;
    clearTimeout(timer);
    await this.checkExit();
  }

  private async checkExit(): Promise<void> {
    const code = await this.run.exited;
    if (code !== 0 || !this.run.lines.some((l) => l.event === 'closed')) throw new Error(`the Java consumer did not close cleanly (exit ${code}):\n  ${this.describe()}`);
  }
}
