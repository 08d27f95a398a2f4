/**
 * Kafka Streams and Kafka Connect (Apache Kafka's own: Streams of the
 * reference broker's version, Connect a release older, see
 * test/java-frameworks/connect/pom.xml) as the frameworks suite drives them,
 * each in its own JVM:
 *
 * - `StreamsApp.start()`: a Streams application of test/java-frameworks
 *   (FrameworksDriver.java: the topologies and the JSON lines it prints);
 * - `readTopic()`: every record of a topic, read_committed by default, with
 *   the Java consumer;
 * - `ConnectWorker.start()`: a Connect worker in distributed mode
 *   (ConnectDistributed) with its REST API on a free port of 127.0.0.1.
 *
 * Each JVM has a small heap and goes down with the test process (setpriv's
 * parent-death signal, and SIGKILL from an exit handler); `stop()` asks for a
 * clean shutdown and SIGKILLs the JVM by its pid if that takes too long.
 * The jars and classes are built into .cache/java-frameworks by
 * scripts/apache-kafka-fetch.sh, which this runs once per process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runFetchScript, SETPRIV } from './apache-kafka.js';
import { waitFor } from './eventually.js';
import { freePort } from './gateway.js';

const MAIN_CLASS = 'queen.gateway.frameworks.FrameworksDriver';
const CONNECT_MAIN_CLASS = 'org.apache.kafka.connect.cli.ConnectDistributed';
const JVM_OPTIONS = ['-Xms64m', '-Xmx192m', '-XX:+UseSerialGC', '-XX:+ExitOnOutOfMemoryError', '-Djava.awt.headless=true'];

/** The Streams applications' classpath, and Connect's (its own jars: one release older, see test/java-frameworks/connect/pom.xml). */
type ClasspathKey = 'java_frameworks' | 'kafka_connect';
const classpaths = new Map<ClasspathKey, Promise<string>>();

function frameworksClasspath(key: ClasspathKey): Promise<string> {
  let found = classpaths.get(key);
  if (!found) {
    found = runFetchScript('frameworks', key).catch((e: unknown) => {
      classpaths.delete(key);
      throw e;
    });
    classpaths.set(key, found);
  }
  return found;
}

/** log4j2 into one file per JVM, read on failure: Streams and Connect say there why they stopped. */
function log4jConfig(dir: string, name: string): { option: string; logFile: string } {
  const logFile = join(dir, `${name}.log`);
  const configFile = join(dir, `${name}-log4j2.properties`);
  writeFileSync(
    configFile,
    [
      'status = warn',
      'appender.file.type = File',
      'appender.file.name = file',
      `appender.file.fileName = ${logFile}`,
      'appender.file.layout.type = PatternLayout',
      'appender.file.layout.pattern = [%d] %p %m (%c)%n',
      'rootLogger.level = INFO',
      'rootLogger.appenderRef.file.ref = file',
    ].join('\n') + '\n',
  );
  return { option: `-Dlog4j2.configurationFile=${configFile}`, logFile };
}

/** One JSON line of the driver; which fields it has depends on `event`. */
export interface DriverLine {
  event: string;
  [field: string]: unknown;
}

/** A JVM child: its JSON lines (when it prints them), the rest of its output, and a stop by pid. */
class JavaProcess {
  readonly lines: DriverLine[] = [];
  private output = '';
  private partial = '';
  private readonly exit: Promise<number | null>;
  private readonly killOnExit = () => this.child.kill('SIGKILL');

  constructor(
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop() ?? '';
      for (const line of parts) {
        if (line.startsWith('{')) this.lines.push(JSON.parse(line) as DriverLine);
        else if (line.trim() !== '') this.keep(line + '\n');
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => this.keep(d));
    process.once('exit', this.killOnExit);
    this.exit = new Promise((resolve) =>
      child.once('exit', (code) => {
        process.removeListener('exit', this.killOnExit);
        resolve(code);
      }),
    );
    child.once('error', (e) => this.keep(`\n${e.message}`));
  }

  static async spawn(classpath: ClasspathKey, mainClass: string, args: string[], logDir: string, logName: string, extraJvmOptions: string[] = []): Promise<JavaProcess> {
    const cp = await frameworksClasspath(classpath);
    mkdirSync(logDir, { recursive: true });
    const log = log4jConfig(logDir, logName);
    const command = ['java', ...JVM_OPTIONS, ...extraJvmOptions, log.option, '-cp', cp, mainClass, ...args];
    const child = SETPRIV
      ? spawn(SETPRIV, ['--pdeathsig', 'KILL', ...command], { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    return new JavaProcess(child, log.logFile);
  }

  private keep(text: string): void {
    this.output = (this.output + text).slice(-20_000);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  exited(): Promise<number | null> {
    return this.exit;
  }

  /** Its lines, its stray output, and its log's warnings, errors and last lines, for a failure message. */
  describe(logLines = 30): string {
    const log = existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8').split('\n') : ['(no log yet)'];
    const warnings = log.filter((l) => / (WARN|ERROR) /.test(l)).slice(-logLines);
    return [
      `lines:\n  ${this.lines.map((l) => JSON.stringify(l)).join('\n  ')}`,
      `output:\n  ${this.output.trim().split('\n').slice(-15).join('\n  ')}`,
      `warnings and errors in ${this.logFile}:\n  ${warnings.join('\n  ')}`,
      `its last log lines:\n  ${log.slice(-12).join('\n  ')}`,
    ].join('\n ');
  }

  /** Writes to its stdin (the driver's "stop"). */
  tell(text: string): void {
    if (!this.hasExited) this.child.stdin!.write(text);
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.hasExited) this.child.kill(signal);
  }

  /** Waits for the exit; SIGKILLs by pid after `timeoutMs`. */
  async stopWithin(timeoutMs: number): Promise<number | null> {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const code = await this.exit;
    clearTimeout(timer);
    return code;
  }
}

// ─── Kafka Streams ───────────────────────────────────────────────────────────

export interface StreamsAppOptions {
  bootstrap: string;
  applicationId: string;
  topology: 'wordcount' | 'totals';
  input: string;
  output: string;
  /** The application's state.dir (RocksDB stores, the process id). */
  stateDir: string;
  /** StreamsConfig entries on top of the driver's. */
  config?: Record<string, string | number | boolean>;
}

export class StreamsApp {
  private constructor(private readonly process: JavaProcess) {}

  static async start(options: StreamsAppOptions): Promise<StreamsApp> {
    const { stateDir, ...rest } = options;
    return new StreamsApp(await JavaProcess.spawn('java_frameworks', MAIN_CLASS, ['streams', JSON.stringify({ ...rest, stateDir })], join(stateDir, '..', 'logs'), options.applicationId));
  }

  get lines(): readonly DriverLine[] {
    return this.process.lines;
  }

  /** The error that stopped a stream thread, when one did. */
  get fatal(): DriverLine | undefined {
    return this.process.lines.find((l) => l.event === 'fatal');
  }

  /** Each store partition restored from its changelog, with how many records it read. */
  get restored(): { store: string; topic: string; partition: number; records: number }[] {
    return this.process.lines.filter((l) => l.event === 'restored') as never;
  }

  get state(): string | undefined {
    return this.process.lines.filter((l) => l.event === 'state').at(-1)?.to as string | undefined;
  }

  describe(): string {
    return `the Streams application (pid ${this.process.pid}): ${this.process.describe()}`;
  }

  /** Waits until every stream thread runs (state RUNNING); fails at once if it stopped instead. */
  async running(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      () => {
        if (this.fatal || this.process.hasExited || this.state === 'ERROR') throw new Error(`the Streams application stopped before it ran: ${this.describe()}`);
        return this.state === 'RUNNING';
      },
      { what: 'the Streams application to reach RUNNING', timeoutMs, intervalMs: 100, describe: () => this.describe() },
    );
  }

  /** A clean close (commits what it processed); fails if the close was not clean. */
  async stop(timeoutMs = 45_000): Promise<void> {
    this.process.tell('stop\n');
    const code = await this.process.stopWithin(timeoutMs);
    const closed = this.process.lines.find((l) => l.event === 'closed');
    if (code !== 0 || closed?.clean !== true) throw new Error(`the Streams application did not close cleanly (exit ${code}): ${this.describe()}`);
  }

  /** SIGKILL by pid, for cleanup after a failure. */
  async kill(): Promise<void> {
    this.process.signal('SIGKILL');
    await this.process.exited();
  }
}

// ─── reading a topic ─────────────────────────────────────────────────────────

export interface ReadRecordLine {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
}

export interface ReadOptions {
  isolation?: 'read_committed' | 'read_uncommitted';
  /** Read on, as the end moves, until there are this many records (or `timeoutMs` passes). */
  atLeast?: number;
  timeoutMs?: number;
  /** Where the reader's log goes. */
  logDir: string;
}

export interface TopicRead {
  records: ReadRecordLine[];
  /** True when `atLeast` records did not arrive within the time. */
  timedOut: boolean;
}

/**
 * Every record of the topic with the Java consumer (no group), from each
 * partition's start to its end under the isolation level (read_committed
 * by default: up to the last stable offset).
 */
export async function readTopic(bootstrap: string, topic: string, options: ReadOptions): Promise<TopicRead> {
  const { logDir, isolation = 'read_committed', atLeast = 0, timeoutMs = 60_000 } = options;
  const reader = await JavaProcess.spawn('java_frameworks', MAIN_CLASS, ['read', JSON.stringify({ bootstrap, topic, isolation, atLeast, timeoutMs })], logDir, 'reader', ['-XX:TieredStopAtLevel=1']);
  const code = await reader.stopWithin(timeoutMs + 60_000);
  if (code !== 0 || !reader.lines.some((l) => l.event === 'end')) throw new Error(`reading ${topic} with the Java consumer failed (exit ${code}): ${reader.describe()}`);
  return { records: reader.lines.filter((l) => l.event === 'record') as never, timedOut: reader.lines.some((l) => l.event === 'timeout') };
}

// ─── Kafka Connect ───────────────────────────────────────────────────────────

export interface ConnectWorkerOptions {
  bootstrap: string;
  /** The Connect cluster's group.id. */
  groupId: string;
  configTopic: string;
  offsetTopic: string;
  statusTopic: string;
  /** Where the worker's properties and log go. */
  dir: string;
  /** The REST port; default a free one (a restarted worker may keep its predecessor's). */
  restPort?: number;
}

export class ConnectWorker {
  private constructor(
    private readonly process: JavaProcess,
    readonly restUrl: string,
    readonly restPort: number,
  ) {}

  static async start(options: ConnectWorkerOptions): Promise<ConnectWorker> {
    const restPort = options.restPort ?? (await freePort());
    mkdirSync(options.dir, { recursive: true });
    const propertiesFile = join(options.dir, 'worker.properties');
    const settings: Record<string, string | number> = {
      'bootstrap.servers': options.bootstrap,
      'group.id': options.groupId,
      'config.storage.topic': options.configTopic,
      'offset.storage.topic': options.offsetTopic,
      'status.storage.topic': options.statusTopic,
      'config.storage.replication.factor': 1,
      'offset.storage.replication.factor': 1,
      'status.storage.replication.factor': 1,
      // Fewer partitions than Connect's 25 and 5: one worker, quicker to create and read.
      'offset.storage.partitions': 2,
      'status.storage.partitions': 1,
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      // Offsets (the source's file position, the sink's consumer offsets) committed every second.
      'offset.flush.interval.ms': 1_000,
      listeners: `http://127.0.0.1:${restPort}`,
      'rest.advertised.host.name': '127.0.0.1',
      'rest.advertised.port': restPort,
      // Plugins found by their service manifests (every Kafka plugin has them), not by scanning every class on the classpath.
      'plugin.discovery': 'service_load',
    };
    writeFileSync(propertiesFile, Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    const process = await JavaProcess.spawn('kafka_connect', CONNECT_MAIN_CLASS, [propertiesFile], options.dir, 'connect', ['-Xmx256m']);
    const worker = new ConnectWorker(process, `http://127.0.0.1:${restPort}`, restPort);
    return worker;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  describe(): string {
    return `the Connect worker (pid ${this.process.pid}, ${this.restUrl}): ${this.process.describe(40)}`;
  }

  /** One REST call; answers the status and the parsed body (null when empty). */
  async rest(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.restUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
  }

  /**
   * Waits until the worker has joined its group and read its config topic:
   * GET /connectors answers 200 (before that the REST server is down or
   * answers that the worker is still starting).
   */
  async ready(timeoutMs = 120_000): Promise<void> {
    await waitFor(
      async () => {
        if (this.process.hasExited) throw new Error(`the Connect worker exited while starting: ${this.describe()}`);
        try {
          return (await this.rest('GET', '/connectors')).status === 200;
        } catch {
          return false;
        }
      },
      { what: 'the Connect worker to answer GET /connectors', timeoutMs, intervalMs: 250, describe: () => this.describe() },
    );
  }

  /** SIGTERM, which Connect answers by stopping its connectors and committing their offsets; SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 45_000): Promise<number | null> {
    this.process.signal('SIGTERM');
    return this.process.stopWithin(timeoutMs);
  }
}
