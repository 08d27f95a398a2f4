/**
 * The share-group benchmark's Java side (./share/ShareBench.java), compiled
 * once by its source's hash against Apache Kafka's own jars into .cache, and
 * run as child processes of the benchmark (killed with the run) that answer
 * in JSON lines. The broker's CPU is read from /proc when the client says it
 * got its first record and when it is done, so a phase's CPU per record
 * leaves out the JVM's start and the group's joining.
 */
import { join } from 'node:path';
import { javaClasspath } from '../support/java-compile.js';
import { cpuSeconds, REPO_ROOT, spawnProcess } from './e2e/processes.js';

const SOURCE = join(REPO_ROOT, 'test/bench/share/ShareBench.java');
const JVM = ['-Xms256m', '-Xmx512m', '-XX:+UseSerialGC', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'];

export function classpath(): Promise<string> {
  return javaClasspath(SOURCE, 'share-bench');
}

export interface JavaRun<T> {
  result: T;
  /** Broker CPU seconds between the client's first record and its end (NaN without a first record). */
  brokerCpuSeconds: number;
}

/** Runs one mode of ShareBench to its `done` (or `produced`) line. */
export async function runJava<T>(args: string[], brokerPid: number, timeoutMs: number): Promise<JavaRun<T>> {
  const cp = await classpath();
  let cpuAtFirst = NaN;
  let cpuAtEnd = NaN;
  const cpu = () => {
    try {
      return cpuSeconds(brokerPid);
    } catch {
      return NaN;
    }
  };
  const child = spawnProcess('java', [...JVM, '-cp', cp, 'queen.gateway.bench.ShareBench', ...args], {
    label: `ShareBench ${args[0]} ${args[0] === 'consume' ? args[1] : ''}`.trim(),
    timeoutMs,
    onMessage(m) {
      if (m['event'] === 'first') cpuAtFirst = cpu();
      if (m['event'] === 'done') cpuAtEnd = cpu();
    },
  });
  const said = await child.waitFor((m) => (['done', 'produced', 'error'].includes(m['event'] as string) ? m : undefined), `${args[0]} result`, timeoutMs);
  if (said['event'] === 'error') throw new Error(`ShareBench ${args.slice(0, 2).join(' ')}: ${String(said['type'])}: ${String(said['message'])}`);
  const result = said as T;
  await child.exited;
  return { result, brokerCpuSeconds: cpuAtEnd - cpuAtFirst };
}
