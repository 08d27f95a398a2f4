/**
 * The campaign's readers over Kafka:
 *
 * - consumer groups of librdkafka members (test/support/groups-members.ts),
 *   classic and KIP-848, each member's reads and acknowledged commits kept
 *   in the history with the time each commit was acknowledged; a member has
 *   one commit outstanding at a time ('ordered': librdkafka retries a failed
 *   commit after a backoff, so with several outstanding a retried older one
 *   lands after a newer one, against Apache Kafka as well), and the
 *   committed offsets are read back at the end (`committedOffsets`);
 * - the consume-transform-produce processor (test/support/
 *   transactional-processor.ts), read_committed in, transactional out,
 *   offsets in the transaction; its input end is known only when the writers
 *   are done, so `finish(ends)` tells it;
 * - `readLog`: a topic from its start to its high watermark with a
 *   read_committed consumer, for the checker.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { KafkaConsumer, Message } from '@confluentinc/kafka-javascript';
import { sleep, waitFor, within } from '../support/eventually.js';
import { startMember, type GroupMember } from '../support/groups-members.js';
import { connectConsumer, disconnect } from '../support/rdkafka.js';
import { TransactionalProcessor, type ProcessorRun } from '../support/transactional-processor.js';
import type { GroupHistory, StoredRecord } from './history.js';

const { CODES } = KafkaJavascript;

export interface CampaignGroup {
  history: GroupHistory;
  members: GroupMember[];
  close(): Promise<void>;
}

/** librdkafka's lines about commits and the coordinator, kept for the post-mortem of a group offset anomaly. */
const COMMIT_LINE = /OffsetCommit|Retrying|coordinator|COMMIT/i;
const KEPT_LINES = 200_000;

export async function startGroup(
  bootstrap: string,
  topic: string,
  group: string,
  protocol: 'classic' | 'consumer',
  size: number,
  keepLog?: (name: string, text: string) => void,
): Promise<CampaignGroup> {
  const history: GroupHistory = { group, topic, protocol, reads: [], commits: [] };
  const members: GroupMember[] = [];
  const log: string[] = [];
  for (let i = 0; i < size; i++) {
    const name = `${group}-m${i}`;
    const member = await within(
      startMember({ bootstrap, group, topic, name, groupProtocol: protocol, commit: 'ordered', ...(keepLog ? { debug: 'protocol,cgrp' } : {}), ...(protocol === 'classic' ? { assignor: 'cooperative-sticky' as const } : {}) }),
      60_000,
      `group member ${name} to connect`,
    );
    member.onRecords = (batch) => {
      for (const r of batch) history.reads.push({ member: name, partition: r.partition, offset: r.offset, value: r.value });
    };
    member.onLog = (line) => {
      if (COMMIT_LINE.test(line) && log.length < KEPT_LINES) log.push(`${new Date().toISOString().slice(11, 23)} ${name} ${line}`);
    };
    member.onCommitted = (offsets) => {
      const at = Date.now();
      for (const [partition, offset] of offsets) history.commits.push({ member: name, partition, offset, at });
      if (keepLog && log.length < KEPT_LINES) log.push(`${new Date(at).toISOString().slice(11, 23)} ${name} ACKNOWLEDGED ${offsets.map(([p, o]) => `p${p}@${o}`).join(' ')}`);
    };
    members.push(member);
  }
  return {
    history,
    members,
    close: () =>
      Promise.all(members.map((m) => within(m.close(), 30_000, `member ${m.name} to close`).catch(() => {}))).then(() => {
        keepLog?.(`${group}-commits.log`, log.join('\n'));
      }),
  };
}

export interface CampaignProcessor {
  processor: TransactionalProcessor;
  run: Promise<ProcessorRun>;
  /** Tells the processor where its input ends now that the writers are done. */
  finish(ends: Map<number, number>): void;
}

export function startProcessor(bootstrap: string, input: string, output: string, partitions: number, transform: (v: string) => string, deadlineMs: number): CampaignProcessor {
  const inputEnd = new Map<number, number>();
  for (let p = 0; p < partitions; p++) inputEnd.set(p, Number.MAX_SAFE_INTEGER);
  const processor = new TransactionalProcessor({
    bootstrap,
    input,
    output,
    partitions: [...inputEnd.keys()],
    group: `${input}-processor`,
    transactionalId: `${input}-processor-tx`,
    commitEvery: 100,
    transform,
    inputEnd,
  });
  const run = processor.run(deadlineMs);
  run.catch(() => {}); // awaited by the campaign; a rejection here must not go unhandled first
  return {
    processor,
    run,
    finish(ends) {
      for (const [p, end] of ends) inputEnd.set(p, end);
    },
  };
}

function watermarks(consumer: KafkaConsumer, topic: string, partition: number): Promise<{ lowOffset: number; highOffset: number }> {
  return new Promise((resolve, reject) =>
    consumer.queryWatermarkOffsets(topic, partition, 10_000, (err, offsets) => (err ? reject(new Error(`watermarks of ${topic}[${partition}]: ${err.message}`)) : resolve(offsets))),
  );
}

/** A group's committed offset of each partition (OffsetFetch through a consumer of that group that never joins it). */
export async function committedOffsets(bootstrap: string, group: string, topic: string, partitions: number): Promise<Map<number, number>> {
  const consumer = await connectConsumer(bootstrap, { 'group.id': group }, topic);
  try {
    const asked = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    for (let attempt = 1; ; attempt++) {
      try {
        const answered = await new Promise<{ partition: number; offset?: number }[]>((resolve, reject) =>
          consumer.committed(asked, 10_000, (err, offsets) => (err ? reject(new Error(`committed offsets of ${group}: ${err.message}`)) : resolve(offsets))),
        );
        return new Map(answered.filter((o) => o.offset !== undefined && o.offset >= 0).map((o) => [o.partition, o.offset!]));
      } catch (e) {
        if (attempt === 10) throw e;
        await sleep(1_000);
      }
    }
  } finally {
    await disconnect(consumer);
  }
}

/** The high watermark of every partition, asked again on an error (a gateway just killed). */
export async function highWatermarks(bootstrap: string, topic: string, partitions: number): Promise<Map<number, number>> {
  const consumer = await connectConsumer(bootstrap, {}, topic);
  try {
    const ends = new Map<number, number>();
    for (let p = 0; p < partitions; p++) {
      for (let attempt = 1; !ends.has(p); attempt++) {
        try {
          ends.set(p, (await watermarks(consumer, topic, p)).highOffset);
        } catch (e) {
          if (attempt === 10) throw e;
          await sleep(1_000);
        }
      }
    }
    return ends;
  } finally {
    await disconnect(consumer);
  }
}

/**
 * Everything a read_committed consumer reads from each partition's start up
 * to its high watermark (asked first, after every writer finished), values
 * as strings; an HTTP push's JSON string payload is read as the string.
 */
export async function readLog(bootstrap: string, topic: string, partitions: number, timeoutMs: number): Promise<StoredRecord[]> {
  const ends = await highWatermarks(bootstrap, topic, partitions);
  const consumer = await connectConsumer(bootstrap, { 'isolation.level': 'read_committed', 'enable.partition.eof': false }, topic);
  try {
    consumer.assign([...ends.keys()].map((partition) => ({ topic, partition, offset: -2 })));
    const records: StoredRecord[] = [];
    const deadline = Date.now() + timeoutMs;
    const done = async () => {
      const positions = consumer.position([...ends.keys()].map((partition) => ({ topic, partition })));
      return positions.every((p) => p.offset !== undefined && p.offset >= 0 && p.offset >= ends.get(p.partition)!) || [...ends.values()].every((e) => e === 0);
    };
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`read ${records.length} records of ${topic} in ${timeoutMs} ms without reaching the high watermarks ${[...ends].map(([p, e]) => `${p}:${e}`).join(' ')}`);
      const batch = await new Promise<Message[]>((resolve) =>
        consumer.consume(1_000, (err, messages) => {
          if (err && err.code !== CODES.ERRORS.ERR__TIMED_OUT && err.code !== CODES.ERRORS.ERR__PARTITION_EOF) return resolve([]);
          resolve(messages ?? []);
        }),
      );
      for (const m of batch) records.push({ partition: m.partition, offset: m.offset, value: asText(m.value) });
      if (batch.length === 0) await sleep(20);
    }
    return records;
  } finally {
    await disconnect(consumer);
  }
}

function asText(value: Buffer | null): string {
  const text = value === null ? '' : value.toString();
  if (!text.startsWith('"')) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'string' ? parsed : text;
  } catch {
    return text;
  }
}

/** Waits (up to three minutes) until every group has read every offset below `ends`; a miss is said, not thrown: the checker counts it. */
export async function waitForGroupsToCatchUp(groups: readonly CampaignGroup[], topic: string, ends: Map<number, number>, say: (line: string) => void): Promise<void> {
  const total = [...ends.values()].reduce((a, b) => a + b, 0);
  const caughtUp = (g: CampaignGroup) => {
    const read = new Set(g.history.reads.map((r) => `${r.partition}@${r.offset}`));
    let n = 0;
    for (const [p, end] of ends) for (let offset = 0; offset < end; offset++) if (read.has(`${p}@${offset}`)) n++;
    return n === total;
  };
  await waitFor(() => groups.every(caughtUp), { what: `both groups to read all ${total} records of ${topic}`, timeoutMs: 180_000, intervalMs: 1_000 }).catch((e: Error) => say(e.message));
}
