/**
 * Kafka 4.4's KafkaShareConsumer as the share group tests drive it: the
 * driver in test/share-groups/ShareConsumerDriver.java, compiled once (by its
 * source's hash) against Apache Kafka's own jars into .cache, and run as a
 * child process speaking JSON lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { javaClasspath } from './java-compile.js';
import { waitFor } from './eventually.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = join(REPO, 'test/share-groups/ShareConsumerDriver.java');
const JVM = ['-Xmx128m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'];

function classpath(): Promise<string> {
  return javaClasspath(SOURCE, 'share-consumer');
}

export interface ShareRecord {
  partition: number;
  offset: number;
  deliveryCount: number | null;
  value: string;
}

export interface ShareConsumerRun {
  child: ChildProcess;
  readonly records: ShareRecord[];
  readonly events: string[];
  /** Every JSON line it printed so far, in order (the campaign's mode prints `acked` lines beside the records). */
  readonly lines: readonly Record<string, unknown>[];
  stderr(): string;
  /** Closes stdin: the consumer closes cleanly (acknowledging and leaving). */
  stop(timeoutMs?: number): Promise<void>;
  /** SIGKILL: the consumer dies holding whatever locks it has. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

function run(args: string[]): Promise<{ child: ChildProcess; lines: Record<string, unknown>[]; stderr: () => string; exited: Promise<number | null> }> {
  return classpath().then((cp) => {
    const child = spawn('java', [...JVM, '-cp', cp, 'queen.gateway.share.ShareConsumerDriver', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: Record<string, unknown>[] = [];
    let partial = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) if (line.trim().startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const exited = new Promise<number | null>((resolveExit, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => {
        process.removeListener('exit', killOnExit);
        resolveExit(code);
      });
    });
    return { child, lines, stderr: () => stderr, exited };
  });
}

/**
 * Starts a share consumer: `accept` accepts all it gets; `hold` keeps its
 * first records' locks and stops polling; `campaign` accepts all and prints
 * each commit's outcome per partition, riding out exceptions.
 */
export async function startShareConsumer(bootstrap: string, group: string, topic: string, mode: 'accept' | 'hold' | 'campaign', seconds = 120): Promise<ShareConsumerRun> {
  const r = await run(['consume', bootstrap, group, topic, mode, String(seconds)]);
  return {
    child: r.child,
    get records() {
      return r.lines.filter((l) => l.event === 'record') as unknown as ShareRecord[];
    },
    get events() {
      return r.lines.map((l) => String(l.event));
    },
    lines: r.lines,
    stderr: r.stderr,
    async stop(timeoutMs = 60_000) {
      r.child.stdin!.end();
      const timer = setTimeout(() => r.child.kill('SIGKILL'), timeoutMs);
      await r.exited.finally(() => clearTimeout(timer));
    },
    async kill() {
      r.child.kill('SIGKILL');
      await r.exited;
    },
    exited: r.exited,
  };
}

/** Sets share group configs through the Java admin client's IncrementalAlterConfigs (GROUP resource). */
export async function setShareGroupConfigs(bootstrap: string, group: string, configs: Record<string, string | number>): Promise<void> {
  const r = await run(['config', bootstrap, group, ...Object.entries(configs).map(([k, v]) => `${k}=${v}`)]);
  r.child.stdin!.end();
  const code = await r.exited;
  if (code !== 0) throw new Error(`setting group configs failed (exit ${code}): ${JSON.stringify(r.lines)} ${r.stderr()}`);
}

/** Waits until the consumer printed at least `count` records, failing with what it said. */
export async function waitForRecords(consumer: ShareConsumerRun, count: number, what: string, timeoutMs = 90_000): Promise<void> {
  await waitFor(() => consumer.records.length >= count || consumer.events.includes('error'), {
    what, timeoutMs, intervalMs: 100,
    describe: () => `it printed ${consumer.records.length} records and events ${consumer.events.join(',')}; stderr: ${consumer.stderr().slice(-2000)}`,
  });
  if (consumer.events.includes('error')) throw new Error(`${what}: the consumer failed: ${consumer.stderr().slice(-2000)}`);
}
