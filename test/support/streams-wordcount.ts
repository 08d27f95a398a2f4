/**
 * The word count Kafka Streams runs in the frameworks suites
 * (test/frameworks/kafka-streams*.test.ts): a fixed input, the counts it
 * must give, and one run of the application against a server with
 * exactly_once_v2, SIGKILLed mid-stream and started again.
 */
import type { Admin } from 'kafkajs';
import { join } from 'node:path';
import { kafkajsClient } from './kafkajs.js';
import { readTopic, StreamsApp, type ReadRecordLine } from './java-frameworks.js';
import { uniqueTopic } from './records.js';

export interface Server {
  bootstrap: string;
  stop(): Promise<void>;
}


const VOCABULARY = ['queen', 'kafka', 'stream', 'log', 'offset', 'partition', 'record', 'commit', 'abort', 'epoch', 'fence', 'store', 'changelog', 'topic', 'broker', 'gateway'];

/** 240 lines of 3 to 9 words from a fixed pseudo-random sequence (the same every run), some in capitals. */
export function wordCountInput(): string[] {
  let seed = 20_261_201;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
  return Array.from({ length: 240 }, () => {
    const words = Array.from({ length: 3 + (next() % 7) }, () => {
      // Skewed: the first words of the vocabulary come up far more often than the last.
      const word = VOCABULARY[Math.floor(((next() % 1000) / 1000) ** 2 * VOCABULARY.length)]!;
      return next() % 5 === 0 ? word.toUpperCase() : word;
    });
    return words.join(next() % 3 === 0 ? ', ' : ' ');
  });
}

/** How often each word occurs, lower-cased, as the application counts them. */
export function countWords(lines: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) for (const word of line.toLowerCase().split(/\W+/).filter(Boolean)) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/** Each key's values in the order a reader of its partition meets them. */
export function valuesPerKey(records: readonly ReadRecordLine[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset)) (out[r.key ?? '(null)'] ??= []).push(r.value ?? '(null)');
  return out;
}

export async function createTopics(admin: Admin, names: string[], partitions: number): Promise<void> {
  await admin.createTopics({ topics: names.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })), waitForLeaders: true });
}

export async function send(bootstrap: string, topic: string, records: { partition: number; key: string | null; value: string }[]): Promise<void> {
  // Idempotent: a retried send (a busy machine, a slow answer) must not write a line twice, or the counts would be right to differ.
  const producer = kafkajsClient(bootstrap).producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: records.map((r) => ({ partition: r.partition, key: r.key, value: r.value })) });
  } finally {
    await producer.disconnect();
  }
}

/**
 * The word count against one server: each word's committed output values in
 * order. Half the input is counted; then, while the second half is being
 * counted, the application is SIGKILLed (a transaction may be open: its
 * updates are written but never committed) and started again on the same
 * state folder, which restores its store from the changelog's committed
 * records and goes on from the committed input offsets.
 */
export async function runWordCount(server: Server, workDir: string, extraConfig: Record<string, string | number> = {}): Promise<Record<string, string[]>> {
  const input = uniqueTopic('wordcount-in');
  const output = uniqueTopic('wordcount-out');
  const lines = wordCountInput();
  const half = lines.length / 2;
  const updates = (part: readonly string[]) => [...countWords(part).values()].reduce((a, b) => a + b, 0);
  const total = updates(lines);
  const logDir = join(workDir, 'logs');

  const admin = kafkajsClient(server.bootstrap).admin();
  await admin.connect();
  try {
    await createTopics(admin, [input, output], 2);
  } finally {
    await admin.disconnect();
  }
  const sendLines = (from: number, to: number) => send(server.bootstrap, input, lines.slice(from, to).map((line, i) => ({ partition: (from + i) % 2, key: null, value: line })));
  const start = () =>
    StreamsApp.start({
      bootstrap: server.bootstrap,
      applicationId,
      topology: 'wordcount',
      input,
      output,
      stateDir: join(workDir, 'wordcount-state'),
      // The killed instance's member is dropped from the group after this long, so the restart's rebalance can end.
      config: { 'processing.guarantee': 'exactly_once_v2', 'consumer.session.timeout.ms': 6_000, 'consumer.heartbeat.interval.ms': 1_000, ...extraConfig },
    });
  const counted = async (app: StreamsApp, atLeast: number, isolation: 'read_committed' | 'read_uncommitted' = 'read_committed') => {
    const read = await readTopic(server.bootstrap, output, { logDir, atLeast, isolation, timeoutMs: 60_000 });
    if (app.fatal || read.timedOut) throw new Error(`the word count gave ${read.records.length} of ${atLeast} updates (${isolation}): ${app.describe()}`);
  };
  const applicationId = uniqueTopic('wordcount');

  await sendLines(0, half);
  let app = await start();
  try {
    await app.running(75_000);
    await counted(app, updates(lines.slice(0, half)));
    await sendLines(half, lines.length);
    // Some of the second half written (committed or not): kill it mid-stream.
    await counted(app, updates(lines.slice(0, half)) + 1, 'read_uncommitted');
    await app.kill();

    app = await start();
    await app.running(75_000);
    await counted(app, total);
    await app.stop();
    // Read once more after the close: nothing may follow the expected updates.
    return valuesPerKey((await readTopic(server.bootstrap, output, { logDir })).records);
  } finally {
    await app.kill();
  }
}


export function expectedWordCountOutput(): Record<string, string[]> {
  return Object.fromEntries([...countWords(wordCountInput())].map(([word, n]) => [word, Array.from({ length: n }, (_, i) => String(i + 1))]));
}
