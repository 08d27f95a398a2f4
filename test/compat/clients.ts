/**
 * The clients of the compatibility matrix (`npm run compat`) and how each
 * scenario program is started. Every program takes the bootstrap address and
 * a name prefix (its topics and groups are named after it, so runs never
 * share state) and prints one JSON line per step: see STEPS.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HERE = fileURLToPath(new URL('.', import.meta.url));

/** What every program reports, in this order; a step it never printed counts as failed. */
export const STEPS = [
  'create-topic',
  'produce-none',
  'produce-gzip',
  'produce-snappy',
  'produce-lz4',
  'produce-zstd',
  'group-of-two',
  'member-leaves',
  'describe-group',
  'list-offsets',
  'transactions',
  'kip848',
  'share-group',
] as const;
export type Step = (typeof STEPS)[number];

export type Toolchain = 'python' | 'go' | 'java' | 'node' | 'kcat';

export interface Client {
  name: string;
  /** The language it is written in, for the table. */
  language: string;
  toolchain: Toolchain;
  /** Topics the runner creates first (name suffix after the prefix, partitions), for a client with no admin API. */
  precreate?: { suffix: string; partitions: number }[];
  /** The command line, given the toolchains' paths (see toolchains()). */
  command(tools: Toolchains): [string, ...string[]];
}

export interface Toolchains {
  python?: string;
  goBin?: string;
  javaClasspath?: string;
}

const TSX = `${ROOT}node_modules/.bin/tsx`;

export const CLIENTS: readonly Client[] = [
  { name: 'confluent-kafka', language: 'Python', toolchain: 'python', command: (t) => [need(t.python, 'python'), `${HERE}python/confluent_scenario.py`] },
  { name: 'kafka-python', language: 'Python', toolchain: 'python', command: (t) => [need(t.python, 'python'), `${HERE}python/kafka_python_scenario.py`] },
  { name: 'aiokafka', language: 'Python', toolchain: 'python', command: (t) => [need(t.python, 'python'), `${HERE}python/aiokafka_scenario.py`] },
  { name: 'franz-go', language: 'Go', toolchain: 'go', command: (t) => [`${need(t.goBin, 'go')}/franzgo`] },
  { name: 'Sarama', language: 'Go', toolchain: 'go', command: (t) => [`${need(t.goBin, 'go')}/sarama`] },
  { name: 'kafka-go', language: 'Go', toolchain: 'go', command: (t) => [`${need(t.goBin, 'go')}/kafkago`] },
  { name: 'Java client', language: 'Java', toolchain: 'java', command: (t) => ['java', '-Xmx256m', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-cp', need(t.javaClasspath, 'java'), 'queen.compat.JavaScenario'] },
  { name: 'kafkajs', language: 'JavaScript', toolchain: 'node', command: () => [TSX, `${HERE}js/kafkajs-scenario.ts`] },
  { name: 'librdkafka (JS)', language: 'JavaScript', toolchain: 'node', command: () => [TSX, `${HERE}js/librdkafka-scenario.ts`] },
  {
    name: 'kcat',
    language: 'shell',
    toolchain: 'kcat',
    precreate: [{ suffix: 'records', partitions: 2 }, { suffix: 'tx', partitions: 1 }],
    command: () => ['bash', `${HERE}kcat-scenario.sh`],
  },
];

function need(path: string | undefined, part: string): string {
  if (path === undefined) throw new Error(`the ${part} toolchain was not set up (scripts/compat-setup.sh ${part})`);
  return path;
}

/** Builds (once, cached) the toolchains the given clients need, through scripts/compat-setup.sh. */
export async function toolchains(clients: readonly Client[]): Promise<Toolchains> {
  const parts = [...new Set(clients.map((c) => c.toolchain).filter((t) => t === 'python' || t === 'go' || t === 'java'))];
  if (parts.length === 0) return {};
  const { stdout } = await run('bash', [`${ROOT}scripts/compat-setup.sh`, ...parts], { maxBuffer: 1 << 20, timeout: 1_200_000 });
  const found: Toolchains = {};
  for (const line of stdout.split('\n')) {
    const at = line.indexOf('=');
    const key = line.slice(0, at);
    const value = line.slice(at + 1);
    if (key === 'python') found.python = value;
    if (key === 'go_bin') found.goBin = value;
    if (key === 'java_classpath') found.javaClasspath = value;
  }
  return found;
}
