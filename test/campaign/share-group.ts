/**
 * The campaign's share group (KIP-932): members that are Kafka 4.4's own
 * KafkaShareConsumer (test/support/java-share-consumer.ts, mode `campaign`;
 * librdkafka has no share consumer), each accepting every record it gets
 * (implicit acknowledgement, commitSync after each poll) and printing what
 * each commit answered per partition. Every delivery (with its delivery
 * count) and every acknowledgement's outcome goes into the history for the
 * checker (./checker.ts, checkShareGroups).
 *
 * A member whose JVM ends while the group runs is replaced, and
 * `killOne()` SIGKILLs a member holding its locks and starts another: its
 * unacknowledged records come back, with a higher delivery count, once their
 * locks run out (`share.record.lock.duration.ms`, set short here).
 */
import { sleep } from '../support/eventually.js';
import { setShareGroupConfigs, startShareConsumer, type ShareConsumerRun } from '../support/java-share-consumer.js';
import type { ShareGroupHistory } from './history.js';

const LOCK_MS = 15_000;
/** The JVM's own end (stdin closed first, or killed on close): far beyond any campaign. */
const MEMBER_SECONDS = 6 * 3600;

export interface CampaignShareGroup {
  history: ShareGroupHistory;
  /** SIGKILLs the longest-running member and starts another in its place. */
  killOne(): Promise<void>;
  /** Members started in all, and exceptions they printed (poll or commit under faults). */
  describe(): string;
  /** True once every value given was delivered and had an acknowledgement answered (accepted or not). */
  settled(values: Iterable<string>): boolean;
  close(): Promise<void>;
}

interface Member {
  name: string;
  run: ShareConsumerRun;
  /** Lines of run.lines already taken into the history. */
  taken: number;
  /** The delivery count of the last delivery of each partition@offset to this member. */
  counts: Map<string, number>;
}

export async function startShareGroup(bootstrap: string, topic: string, group: string, size: number, keepLog?: (name: string, text: string) => void): Promise<CampaignShareGroup> {
  const history: ShareGroupHistory = { group, topic, deliveries: [], acks: [] };
  for (let attempt = 1; ; attempt++) {
    try {
      await setShareGroupConfigs(bootstrap, group, { 'share.auto.offset.reset': 'earliest', 'share.record.lock.duration.ms': LOCK_MS });
      break;
    } catch (e) {
      if (attempt === 5) throw e;
      await sleep(2_000);
    }
  }
  const members: Member[] = [];
  const exceptions: string[] = [];
  let started = 0;
  let closing = false;

  const take = (m: Member) => {
    const lines = m.run.lines;
    for (; m.taken < lines.length; m.taken++) {
      const line = lines[m.taken]!;
      if (line.event === 'record') {
        const d = { member: m.name, partition: Number(line.partition), offset: Number(line.offset), value: String(line.value), deliveryCount: Number(line.deliveryCount ?? 0) };
        history.deliveries.push(d);
        m.counts.set(`${d.partition}@${d.offset}`, d.deliveryCount);
      } else if (line.event === 'acked') {
        const partition = Number(line.partition);
        for (const offset of line.offsets as number[]) {
          history.acks.push({ member: m.name, partition, offset, deliveryCount: m.counts.get(`${partition}@${offset}`) ?? 0, accepted: line.accepted === true });
        }
      } else if (line.event === 'exception' || line.event === 'error') {
        exceptions.push(`${m.name} ${String(line.where ?? '')} ${String(line.type)}: ${String(line.message).slice(0, 200)}`);
      }
    }
  };

  const start = async (): Promise<void> => {
    const name = `${group}-m${started++}`;
    const member: Member = { name, run: await startShareConsumer(bootstrap, group, topic, 'campaign', MEMBER_SECONDS), taken: 0, counts: new Map() };
    members.push(member);
    void member.run.exited.then(() => {
      take(member);
      members.splice(members.indexOf(member), 1);
      if (!closing) return start();
    }).catch((e: Error) => exceptions.push(`${name} could not be replaced: ${e.message}`));
  };
  for (let i = 0; i < size; i++) await start();
  const pump = setInterval(() => members.forEach(take), 250);

  return {
    history,
    async killOne() {
      const victim = members[0];
      if (victim) await victim.run.kill(); // its exit starts the replacement
    },
    describe: () => `${started} members started, ${exceptions.length} exceptions${exceptions.length ? ` (first: ${exceptions[0]})` : ''}`,
    settled(values) {
      members.forEach(take);
      const answered = new Set<string>();
      for (const a of history.acks) answered.add(`${a.partition}@${a.offset}`);
      const delivered = new Set<string>();
      for (const d of history.deliveries) if (answered.has(`${d.partition}@${d.offset}`)) delivered.add(d.value);
      for (const v of values) if (!delivered.has(v)) return false;
      return true;
    },
    async close() {
      if (closing) return;
      closing = true;
      clearInterval(pump);
      await Promise.all(members.map((m) => m.run.stop(30_000).catch(() => {})));
      members.forEach(take);
      keepLog?.(`${group}-exceptions.log`, exceptions.join('\n'));
    },
  };
}
