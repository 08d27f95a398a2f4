/**
 * Apache Kafka itself on loopback, the reference the gateway is compared with:
 * `startApacheKafka()` beside the project's `startBroker()`.
 *
 * ```ts
 * const kafka = await startApacheKafka();          // a free port of 127.0.0.1
 * // new Kafka({ brokers: [kafka.bootstrap] }) ... 'bootstrap.servers': kafka.bootstrap
 * await kafka.stop();
 * ```
 *
 * One JVM per call: a single KRaft node in the combined broker and controller
 * roles, its storage formatted (`--standalone`) in a fresh temporary folder,
 * both listeners on free ports of 127.0.0.1, sized for a 2-core machine shared
 * with other work (512 MiB heap, serial GC, one or two threads per pool, the
 * internal topics at one partition and replication factor 1). Ready once it
 * answers a Metadata request (the project's own protocol codecs) naming
 * itself. `stop()` sends SIGTERM, which Kafka answers with a clean shutdown,
 * and SIGKILLs it if that takes longer than `stopTimeoutMs`; then the folder
 * is removed. Several may run at once: each has its own folder and ports.
 *
 * The JVM does not outlive the test process: it gets SIGTERM when its parent
 * dies (setpriv's parent-death signal, even if the parent was SIGKILLed) and
 * SIGKILL from an exit handler when the parent exits without stopping it.
 *
 * The jars come from Maven Central through scripts/apache-kafka-fetch.sh,
 * which this runs once per process (it returns at once when the cache is
 * complete; `npm test` has run it before the suite).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiKey } from '../../protocol/api-keys.js';
import { sleep } from './eventually.js';
import { freePort } from './gateway.js';
import { RawConnection } from './raw-connection.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FETCH_SCRIPT = join(REPO, 'scripts/apache-kafka-fetch.sh');

export interface ApacheKafkaOptions {
  /** The client listener's port; default a free one (the controller's is always a free one). */
  port?: number;
  /** auto.create.topics.enable; Kafka's default, true. */
  autoCreateTopics?: boolean;
  /** group.initial.rebalance.delay.ms; default 0 so groups form at once (Kafka's default is 3000). */
  initialRebalanceDelayMs?: number;
  /**
   * More client listeners beside PLAINTEXT (which start-up probes), e.g. a
   * SASL_PLAINTEXT one on a port the caller picked; their own settings
   * (listener.name.<name>.*) go in `config`.
   */
  extraListeners?: { name: string; protocol: string; port: number }[];
  /** Further server.properties entries; they replace the defaults of the same name. */
  config?: Record<string, string | number | boolean>;
  /** JVM options instead of the defaults (heap, GC). */
  jvmOptions?: string[];
  /** How long to wait for the first answer to Metadata. Default 90 s. */
  startTimeoutMs?: number;
  /** How long stop() waits for a clean shutdown before SIGKILL. Default 30 s. */
  stopTimeoutMs?: number;
  /** SASL and TLS listeners, users and an authorizer (see KafkaSecurity). */
  security?: KafkaSecurity;
}

/**
 * Apache Kafka secured as issue 19's comparisons need it, beside the
 * PLAINTEXT listener the start-up probe uses (its ANONYMOUS principal is a
 * super user, so the probe and the harness's own set-up pass the authorizer):
 *
 * - `listeners`: SASL_PLAINTEXT, SASL_SSL or SSL listeners on ports the
 *   caller picked, each named after its protocol (listener.name.<name>.*);
 * - `mechanisms`: sasl.enabled.mechanisms in this order, so an
 *   UNSUPPORTED_SASL_MECHANISM lists them as the gateway does;
 * - `plainUsers` through PlainLoginModule's JAAS user_<name> entries;
 *   `scramUsers` written into the metadata at format time (kafka-storage
 *   --add-scram, 4096 iterations, SHA-256 and SHA-512 alike);
 * - OAUTHBEARER validated by OAuthBearerValidatorCallbackHandler against a
 *   JWKS file (its file: URL allowed by the JVM's system property);
 * - TLS from PEM files (the server key and certificate chain, no password);
 * - `superUsers`: StandardAuthorizer on, these principals and ANONYMOUS above it;
 * - `maxReauthMs`: connections.max.reauth.ms.
 */
export interface KafkaSecurity {
  listeners: { name: string; protocol: 'SASL_PLAINTEXT' | 'SASL_SSL' | 'SSL'; port: number }[];
  mechanisms?: readonly string[];
  plainUsers?: Record<string, string>;
  scramUsers?: Record<string, string>;
  oauthbearer?: { jwksFile: string; audience?: string; issuer?: string };
  tls?: { certFile: string; keyFile: string };
  superUsers?: readonly string[];
  maxReauthMs?: number;
}

const PLAIN_LOGIN = 'org.apache.kafka.common.security.plain.PlainLoginModule';
const SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule';
const OAUTH_LOGIN = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';
const OAUTH_VALIDATOR = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';

/** The server.properties entries, JVM options and format arguments a KafkaSecurity becomes. */
function securitySettings(security: KafkaSecurity, dir: string): { config: Record<string, string | number>; jvmOptions: string[]; formatArgs: string[] } {
  const mechanisms = security.mechanisms ?? ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', ...(security.oauthbearer ? ['OAUTHBEARER'] : [])];
  const config: Record<string, string | number> = {};
  const jvmOptions: string[] = [];
  const quoted = (value: string) => JSON.stringify(value);
  for (const listener of security.listeners) {
    const prefix = `listener.name.${listener.name.toLowerCase()}`;
    if (listener.protocol !== 'SSL') {
      config[`${prefix}.sasl.enabled.mechanisms`] = mechanisms.join(',');
      for (const mechanism of mechanisms) {
        const at = `${prefix}.${mechanism.toLowerCase()}`;
        if (mechanism === 'PLAIN') {
          const users = Object.entries(security.plainUsers ?? {}).map(([u, p]) => ` user_${u}=${quoted(p)}`).join('');
          config[`${at}.sasl.jaas.config`] = `${PLAIN_LOGIN} required${users};`;
        } else if (mechanism.startsWith('SCRAM-')) {
          config[`${at}.sasl.jaas.config`] = `${SCRAM_LOGIN} required;`;
        } else if (mechanism === 'OAUTHBEARER') {
          config[`${at}.sasl.jaas.config`] = `${OAUTH_LOGIN} required;`;
          config[`${at}.sasl.server.callback.handler.class`] = OAUTH_VALIDATOR;
        }
      }
    }
  }
  if (security.oauthbearer) {
    const url = `file://${security.oauthbearer.jwksFile}`;
    config['sasl.oauthbearer.jwks.endpoint.url'] = url;
    if (security.oauthbearer.audience) config['sasl.oauthbearer.expected.audience'] = security.oauthbearer.audience;
    if (security.oauthbearer.issuer) config['sasl.oauthbearer.expected.issuer'] = security.oauthbearer.issuer;
    // Kafka 4 reads no OAuth URL the operator has not allowed.
    jvmOptions.push(`-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=${url}`);
  }
  if (security.tls) {
    // One PEM file with the key and the chain, as Kafka's PEM keystore reads it.
    const keystore = join(dir, 'keystore.pem');
    writeFileSync(keystore, readFileSync(security.tls.keyFile, 'utf8') + '\n' + readFileSync(security.tls.certFile, 'utf8'));
    config['ssl.keystore.type'] = 'PEM';
    config['ssl.keystore.location'] = keystore;
  }
  if (security.superUsers) {
    config['authorizer.class.name'] = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';
    config['super.users'] = [...security.superUsers, 'User:ANONYMOUS'].join(';');
  }
  if (security.maxReauthMs !== undefined) config['connections.max.reauth.ms'] = security.maxReauthMs;
  const formatArgs = Object.entries(security.scramUsers ?? {}).flatMap(([user, password]) =>
    ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((mechanism) => ['--add-scram', `${mechanism}=[name=${user},password=${password}]`]),
  );
  return { config, jvmOptions, formatArgs };
}

export interface ApacheKafka {
  /** "127.0.0.1:port", ready for `bootstrap.servers`. */
  bootstrap: string;
  host: string;
  port: number;
  /** The KRaft controller's listener. */
  controllerPort: number;
  /** The broker's node id (1). */
  nodeId: number;
  clusterId: string;
  /** Apache Kafka's version, as in test/apache-kafka/pom.xml. */
  version: string;
  /** The JVM's pid. */
  pid: number;
  /** The temporary folder holding server.properties, the data and server.log. */
  dir: string;
  /** Kafka's own log (log4j), for a test that wants to say what the broker said. */
  logFile: string;
  /** The last lines of server.log. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

/** A small heap and the serial collector: sized for a 2-core machine shared with other work. */
export const DEFAULT_JVM_OPTIONS = ['-Xms256m', '-Xmx512m', '-XX:+UseSerialGC', '-XX:+ExitOnOutOfMemoryError', '-Djava.awt.headless=true'];
const NODE_ID = 1;

export interface ApacheKafkaInstall {
  version: string;
  /** The folder of jars: the classpath is `<libs>/*`. */
  libs: string;
}

let install: Promise<ApacheKafkaInstall> | null = null;

/** Makes sure Apache Kafka's jars are in the cache (fetching them if not) and says where. */
export function apacheKafkaInstall(): Promise<ApacheKafkaInstall> {
  install ??= runFetchScript('broker', 'kafka_libs')
    .then((libs) => ({ version: libs.split('/').at(-2) ?? 'unknown', libs }))
    .catch((e: unknown) => {
      install = null;
      throw e;
    });
  return install;
}

/**
 * Runs scripts/apache-kafka-fetch.sh for one part (`broker`, `java-client` or `frameworks`)
 * and answers the value it prints for `key`: a folder or a classpath.
 */
export function runFetchScript(part: 'broker' | 'java-client' | 'frameworks', key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [FETCH_SCRIPT, part], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      const value = stdout.match(new RegExp(`^${key}=(.+)$`, 'm'))?.[1];
      if (code !== 0 || !value) reject(new Error(`scripts/apache-kafka-fetch.sh ${part} failed (exit ${code}):\n${stderr.trim()}`));
      else resolve(value);
    });
  });
}

/**
 * server.properties for one node in the combined roles, its data in `<dir>/data`;
 * `options.config` replaces any default (a cluster's node.id and quorum, say).
 */
export function serverProperties(options: ApacheKafkaOptions, dir: string, port: number, controllerPort: number, securityConfig: Record<string, string | number> = {}): string {
  const extra = [...(options.extraListeners ?? []), ...(options.security?.listeners ?? [])];
  const extraAt = extra.map((l) => `,${l.name}://127.0.0.1:${l.port}`).join('');
  const settings: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': NODE_ID,
    'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}${extraAt}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}${extraAt}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': `CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${extra.map((l) => `,${l.name}:${l.protocol}`).join('')}`,
    'log.dirs': join(dir, 'data'),
    // Two cores shared with other work: the fewest threads that still serve clients.
    'num.network.threads': 2,
    'num.io.threads': 2,
    'background.threads': 2,
    'num.recovery.threads.per.data.dir': 1,
    'num.replica.fetchers': 1,
    'group.coordinator.threads': 1,
    'share.coordinator.threads': 1,
    'log.cleaner.threads': 1,
    // The cleaner's buffer is taken from the heap at start; Kafka's 128 MiB would be a quarter of it.
    'log.cleaner.dedupe.buffer.size': 8 * 1024 * 1024,
    // One node: every internal topic at replication factor 1, and one partition so a first group or transaction is quick.
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'transaction.state.log.num.partitions': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    'share.coordinator.state.topic.num.partitions': 1,
    'group.initial.rebalance.delay.ms': options.initialRebalanceDelayMs ?? 0,
    'auto.create.topics.enable': options.autoCreateTopics ?? true,
    ...securityConfig,
    ...options.config,
  };
  return Object.entries(settings)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join('\n');
}

/** Kafka's log4j2 configuration: everything at INFO into `logFile`, or to stdout when there is none. */
export function log4jProperties(logFile: string | null): string {
  const appender = logFile === null ? ['appender.log.type = Console', 'appender.log.target = SYSTEM_OUT'] : ['appender.log.type = File', `appender.log.fileName = ${logFile}`];
  return [
    'status = warn',
    ...appender,
    'appender.log.name = log',
    'appender.log.layout.type = PatternLayout',
    'appender.log.layout.pattern = [%d] %p %m (%c)%n',
    'rootLogger.level = INFO',
    'rootLogger.appenderRef.log.ref = log',
  ].join('\n');
}

/** Runs one of Kafka's main classes to completion (the storage format). */
function runJava(classpath: string, jvmOptions: string[], mainClass: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', [...jvmOptions, '-cp', classpath, mainClass, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/**
 * A random Uuid (a cluster id, a metadata directory id) as Kafka's
 * Uuid.randomUuid() makes them: never one starting with '-', which
 * kafka-storage's argument parser takes for an option (one start in 64
 * failed with its usage text).
 */
export function randomKafkaUuid(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** setpriv is util-linux's; where it is missing, the exit handler alone stops an orphaned JVM. */
export const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path)) ?? null;

/** Why a start failed, and whether new ports may help (another process took one first). */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

export async function startApacheKafka(options: ApacheKafkaOptions = {}): Promise<ApacheKafka> {
  const { version, libs } = await apacheKafkaInstall();
  return startOnFreePorts(() => startOnce(options, version, libs), options.port === undefined);
}

/**
 * A free port can be taken by someone else before Kafka binds it: then
 * `start` runs again (it picks new ones), up to three times in all, when the
 * ports were free ones (`mayRetry`) rather than the caller's.
 */
export async function startOnFreePorts<T>(start: () => Promise<T>, mayRetry = true): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (!(e instanceof StartFailure && e.portTaken && attempt < 3 && mayRetry)) throw e;
    }
  }
}

async function startOnce(options: ApacheKafkaOptions, version: string, libs: string): Promise<ApacheKafka> {
  const dir = mkdtempSync(join(tmpdir(), 'queen-apache-kafka-'));
  const port = options.port ?? (await freePort());
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();
  const clusterId = randomKafkaUuid();
  const propertiesFile = join(dir, 'server.properties');
  const logFile = join(dir, 'server.log');
  const log4jFile = join(dir, 'log4j2.properties');
  const security = options.security ? securitySettings(options.security, dir) : { config: {}, jvmOptions: [], formatArgs: [] };
  writeFileSync(propertiesFile, serverProperties(options, dir, port, controllerPort, security.config) + '\n');
  writeFileSync(log4jFile, log4jProperties(logFile) + '\n');
  const jvmOptions = [...(options.jvmOptions ?? DEFAULT_JVM_OPTIONS), ...security.jvmOptions, `-Dlog4j2.configurationFile=${log4jFile}`];
  const logTail = (lines = 40) => logFileTail(logFile, lines);

  try {
    await formatKafkaStorage(libs, propertiesFile, clusterId, ['--standalone', ...security.formatArgs]);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }

  const jvm = spawnKafka(libs, jvmOptions, propertiesFile);
  // Registered after the JVM's own exit handler, so the folder goes once the JVM has been killed.
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await jvm.end('SIGTERM', options.stopTimeoutMs ?? 30_000);
      process.removeListener('exit', removeDir);
      removeDir();
    })();
    return stopping;
  };

  try {
    await waitForMetadata(port, options.startTimeoutMs ?? 90_000, () => jvm.exited, [NODE_ID]);
  } catch (e) {
    const said = `${jvm.output().trim()}\n${logTail()}`;
    const exited = jvm.exited;
    await stop();
    const reason = exited ? 'Apache Kafka exited before it answered Metadata' : (e as Error).message;
    throw new StartFailure(`${reason} on 127.0.0.1:${port}. What it said:\n${said}`, exited && isPortTaken(said));
  }

  return {
    bootstrap: `127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    controllerPort,
    nodeId: NODE_ID,
    clusterId,
    version,
    pid: jvm.pid,
    dir,
    logFile,
    logTail,
    stop,
  };
}

/** Whether what a JVM said before it exited means another process had one of its ports. */
export function isPortTaken(said: string): boolean {
  return /Address already in use|BindException/.test(said);
}

/** The last `lines` lines of a Kafka log file. */
export function logFileTail(logFile: string, lines = 40): string {
  return existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-lines - 1).join('\n') : '(no server.log yet)';
}

/**
 * Formats a node's storage (kafka-storage format) with `args` beside the
 * cluster id and server.properties: `--standalone` for one node, or
 * `--initial-controllers` for a quorum of several.
 */
export async function formatKafkaStorage(libs: string, propertiesFile: string, clusterId: string, args: string[]): Promise<void> {
  const formatted = await runJava(join(libs, '*'), ['-Xmx256m', '-XX:+UseSerialGC'], 'kafka.tools.StorageTool', ['format', '--cluster-id', clusterId, '--config', propertiesFile, ...args]);
  if (formatted.code !== 0) throw new StartFailure(`Formatting Apache Kafka's storage failed (exit ${formatted.code}):\n${formatted.output.trim()}`, false);
}

/** One running kafka.Kafka JVM. */
export interface KafkaJvm {
  pid: number;
  readonly exited: boolean;
  /** Resolves once the JVM has exited. */
  exit: Promise<void>;
  /** What the JVM wrote on stdout and stderr (the last 20,000 characters); its log goes to the log4j file. */
  output(): string;
  /** Sends `signal`, SIGKILL after `forceAfterMs` if it is still there, and resolves once it has exited. */
  end(signal: NodeJS.Signals, forceAfterMs: number): Promise<void>;
}

/**
 * Starts kafka.Kafka on a server.properties, handing what it writes on
 * stdout and stderr to `onOutput`. The JVM gets SIGTERM when this
 * process dies (setpriv's parent-death signal) and SIGKILL from an exit
 * handler when this process exits without ending it.
 */
export function spawnKafka(libs: string, jvmOptions: string[], propertiesFile: string, onOutput?: (chunk: string) => void): KafkaJvm {
  const command = ['java', ...jvmOptions, '-cp', join(libs, '*'), 'kafka.Kafka', propertiesFile];
  const child: ChildProcess = SETPRIV
    ? spawn(SETPRIV, ['--pdeathsig', 'TERM', ...command], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: string) => {
    output = (output + d).slice(-20_000);
    onOutput?.(d);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  child.once('error', (e) => keep(`\n${e.message}`));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      process.removeListener('exit', killOnExit);
      resolve();
    }),
  );
  return {
    pid: child.pid!,
    get exited() {
      return exited;
    },
    exit,
    output: () => output,
    async end(signal, forceAfterMs) {
      if (exited) return;
      child.kill(signal);
      const forced = setTimeout(() => child.kill('SIGKILL'), forceAfterMs);
      await exit;
      clearTimeout(forced);
    },
  };
}

/**
 * Polls the broker on `port` with Metadata (all topics) until it answers
 * naming every one of `nodeIds`: itself, or every broker of a cluster.
 */
export async function waitForMetadata(port: number, timeoutMs: number, gone: () => boolean, nodeIds: readonly number[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no connection yet';
  while (!gone()) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for Metadata naming brokers ${nodeIds.join(', ')} (last: ${last})`);
    let connection: RawConnection | null = null;
    try {
      connection = await RawConnection.open(port);
      const answer = await connection.request(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 5_000);
      const listed = answer.brokers.map((b: { nodeId: number }) => b.nodeId);
      if (nodeIds.every((id) => listed.includes(id))) return;
      last = `Metadata listed brokers [${listed.join(', ')}]`;
    } catch (e) {
      last = (e as Error).message;
    } finally {
      connection?.destroy();
    }
    await sleep(100);
  }
}
