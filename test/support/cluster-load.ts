/**
 * The load a cluster is held to while a fault runs, for the gateway rig
 * (test/e2e/cluster.test.ts) and a cluster of Apache Kafka brokers alike
 * (test/differential/cluster.test.ts), so the two are measured the same way:
 *
 * - an idempotent librdkafka producer writes TOTAL numbered, keyed records
 *   in chunks: the topic must hold each exactly once, in order per partition
 *   (so per key);
 * - a transactional consume-transform-produce processor (librdkafka, read
 *   committed, offsets in the transaction) copies them: the output must hold
 *   each exactly once, in order;
 * - a consumer group of two librdkafka members reads them all, committing
 *   asynchronously after each batch. A group delivers at least once (Kafka's
 *   promise), so records read again are counted and returned, not failed:
 *   the caller compares them with Apache Kafka's on the same fault.
 *
 * Every step has its own deadline and fails with a sentence naming it and
 * what the clients had done by then, with `describe()`'s view of the cluster
 * (its processes' logs): a hang reads as which step, not as a test timeout.
 */
import { expect } from 'vitest';
import { sleep, within } from './eventually.js';
import { allRecords, sequenceCounts, startMember, waitForAllRecords, type GroupMember, type MemberView } from './groups-members.js';
import { connectProducer, createTopic, disconnect, expectDelivered, expectStoredCount, produceAll, readRecords } from './rdkafka.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from './records.js';
import { TransactionalProcessor, type ProcessorRun } from './transactional-processor.js';

export const LOAD_PARTITIONS = 6;
export const LOAD_TOTAL = 1_800;
const CHUNK = 60;

export interface LoadTarget {
  /** Every node, comma-separated: the producer's and the checks' bootstrap.servers. */
  bootstrap: string;
  /** The cluster's state for a failure message (process logs). */
  describe(): string;
}

export interface LoadOptions {
  /** bootstrap.servers of the group members and the processor; default the target's. */
  clients?: string;
  /** Waited for 1 s after the producer starts; producing goes on meanwhile. */
  fault(topic: string): Promise<void>;
  /** The group members' group.protocol: 'consumer' is KIP-848's; default classic. */
  groupProtocol?: 'classic' | 'consumer';
}

/** What the group did, for the log line and the comparison with Kafka. */
export interface LoadOutcome {
  label: string;
  /** Distinct records read by the group (always LOAD_TOTAL once the run passes). */
  distinct: number;
  /** Records the group read more than once. */
  reread: number;
  /** Of those, records read by both members (a partition moved) rather than twice by one. */
  crossMember: number;
  rebalances: number;
  commitErrors: number;
  /** Instances and transactions of the processor, and why each earlier instance ended. */
  processorInstances: number;
  transactions: number;
  processorEndings: string[];
  /** Per member: records, rebalances, errors (the first three). */
  members: string;
  /** Where the re-reads are, per partition: "p3 60 at offsets 120-179 by x then y". */
  rereadRanges: string[];
}

export function describeOutcome(o: LoadOutcome): string {
  return (
    `${o.label}: the group read ${o.distinct} of ${LOAD_TOTAL} records, ${o.reread} of them more than once (${o.crossMember} by both members), ` +
    `${o.rebalances} rebalances, ${o.commitErrors} failed commits; the processor ran ${o.processorInstances} instance(s), ${o.transactions} transactions\n` +
    `  members: ${o.members}${o.rereadRanges.length ? `\n  read again: ${o.rereadRanges.join('; ')}` : ''}` +
    `${o.processorEndings.length ? `\n  processor instances ended: ${o.processorEndings.join(' | ')}` : ''}`
  );
}

/**
 * Produces LOAD_TOTAL numbered records in chunks while `fault` runs, with the
 * processor and the group reading along, then accounts for every record.
 * The budget (about 250 s in all) fits a 300 s test.
 */
export async function underLoad(target: LoadTarget, label: string, options: LoadOptions): Promise<LoadOutcome> {
  const clients = options.clients ?? target.bootstrap;
  const input = uniqueTopic(`${label}-in`);
  const output = uniqueTopic(`${label}-out`);
  await createTopic(target.bootstrap, input, LOAD_PARTITIONS);
  await createTopic(target.bootstrap, output, LOAD_PARTITIONS);
  const partitions = Array.from({ length: LOAD_PARTITIONS }, (_, p) => p);
  const records: SentRecord[] = Array.from({ length: LOAD_TOTAL }, (_, seq) => ({
    partition: seq % LOAD_PARTITIONS,
    key: `key-${seq % (LOAD_PARTITIONS * 2)}`,
    value: sequencedValue(label, seq),
    headers: [],
    timestamp: Date.now(),
  }));

  const members: GroupMember[] = [];
  let produced = 0;
  const progress = () =>
    `${produced} of ${LOAD_TOTAL} produced; ${processor.describe()}; group ${members.map((m) => `${m.name} read ${m.records.length} (assigned ${[...m.assigned].join(',') || '-'}, errors ${m.errors.slice(-2).join(' | ') || 'none'})`).join(', ')}`;
  const step = <T>(promise: Promise<T>, ms: number, what: string) =>
    within(promise, ms, what).catch((e: Error) => {
      throw new Error(`${label}: ${e.message}; ${progress()}\n${target.describe()}`);
    });

  const processor = new TransactionalProcessor({
    bootstrap: clients,
    input,
    output,
    partitions,
    group: `${input}-processor`,
    transactionalId: `${input}-tx`,
    commitEvery: 50,
    transform: (value) => value.replace(`${label}:`, `${label}-copied:`),
    inputEnd: new Map(partitions.map((p) => [p, LOAD_TOTAL / LOAD_PARTITIONS])),
  });
  for (const name of ['a', 'b']) members.push(await step(startMember({ bootstrap: clients, group: `${input}-group`, topic: input, name: `${label}-${name}`, groupProtocol: options.groupProtocol ?? 'classic' }), 30_000, `member ${name} to connect`));
  const processed = processor.run(200_000);
  try {
    const producer = await step(
      connectProducer(target.bootstrap, {
        'enable.idempotence': true,
        'linger.ms': 5,
        'message.timeout.ms': 60_000,
        'metadata.max.age.ms': 2_000,
        'topic.metadata.refresh.interval.ms': 1_000,
      }),
      30_000,
      'the producer to connect',
    );
    const faultDone = (async () => {
      await sleep(1_000);
      await options.fault(input);
    })();
    try {
      await step(
        (async () => {
          for (let from = 0; from < LOAD_TOTAL; from += CHUNK) {
            expectDelivered(await produceAll(producer, input, records.slice(from, from + CHUNK), { timeoutMs: 60_000 }));
            produced = from + CHUNK;
            await sleep(100);
          }
        })(),
        100_000,
        'every record to be produced and acknowledged',
      );
    } finally {
      await step(faultDone, 90_000, 'the fault to finish');
      await step(disconnect(producer), 30_000, 'the producer to disconnect');
    }

    // The input: every record once, in order per partition (so per key), nothing extra stored.
    await step(expectStoredCount(target.bootstrap, input, partitions, LOAD_TOTAL), 30_000, 'the stored record counts');
    expectExactlyOnceInOrder(label, LOAD_TOTAL, await step(readRecords(target.bootstrap, input, { partitions, count: LOAD_TOTAL, timeoutMs: 30_000 }), 35_000, 'the input to be read back'));

    const run = await step(processed, 100_000, 'the transactional processor to copy the input to its end');
    const copied = await step(readRecords(clients, output, { partitions, count: LOAD_TOTAL, timeoutMs: 30_000, config: { 'isolation.level': 'read_committed' } }), 35_000, 'the output to be read back');
    expectExactlyOnceInOrder(`${label}-copied`, LOAD_TOTAL, copied);
    expect(run.transactions).toBeGreaterThan(0);

    await waitForAllRecords(label, LOAD_TOTAL, members, 45_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${target.describe()}`);
    });
    return outcome(label, members, run);
  } finally {
    processor.stop();
    await Promise.all(members.map((m) => within(m.close(), 30_000, `member ${m.name} to close`).catch(() => {})));
    await within(processed, 40_000, 'the processor to stop').catch(() => {});
  }
}

function outcome(label: string, members: readonly MemberView[], run: ProcessorRun): LoadOutcome {
  const counts = sequenceCounts(label, allRecords(members));
  const readBy = (seq: number) => members.filter((m) => sequenceCounts(label, m.records).has(seq)).length;
  // partition -> offset -> the members that read it, in order
  const readers = new Map<number, Map<number, string[]>>();
  for (const m of members) {
    for (const r of m.records) {
      const offsets = readers.get(r.partition) ?? new Map<number, string[]>();
      offsets.set(r.offset, [...(offsets.get(r.offset) ?? []), m.name]);
      readers.set(r.partition, offsets);
    }
  }
  const rereadRanges: string[] = [];
  for (const [p, offsets] of [...readers].sort((a, b) => a[0] - b[0])) {
    const byReaders = new Map<string, number[]>();
    for (const [offset, names] of offsets) if (names.length > 1) byReaders.set(names.join(' then '), [...(byReaders.get(names.join(' then ')) ?? []), offset]);
    for (const [who, list] of byReaders) rereadRanges.push(`p${p} ${list.length} at offsets ${Math.min(...list)}-${Math.max(...list)} by ${who}`);
  }
  return {
    label,
    distinct: counts.size,
    reread: [...counts.values()].filter((n) => n > 1).length,
    crossMember: [...counts.keys()].filter((seq) => readBy(seq) > 1).length,
    rebalances: members.reduce((n, m) => n + m.events.length, 0),
    commitErrors: members.reduce((n, m) => n + m.errors.filter((e) => e.startsWith('commit')).length, 0),
    processorInstances: run.instances,
    transactions: run.transactions,
    processorEndings: run.endings,
    members: members.map((m) => `${m.name} ${m.records.length} records, ${m.events.map((e) => `${e.kind[0]}${e.partitions.join('.')}`).join(' ') || 'no rebalance'}, ${m.errors.length} errors${m.errors.length ? ` (${m.errors.slice(0, 3).join(' | ')})` : ''}`).join('; '),
    rereadRanges,
  };
}
