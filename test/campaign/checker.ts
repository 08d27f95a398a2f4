/**
 * The fault campaign's judge, in the spirit of Jepsen's analyses of Kafka
 * look-alikes: from a history (./history.ts) alone it counts
 *
 * - lost: an acknowledged write (or a committed transaction's record) that
 *   the topic does not hold, or that a consumer group never read;
 * - duplicated: a value the topic holds more than once (every producer here
 *   is idempotent, transactional or keyed by an Idempotency-Key), and a
 *   transform output held more than once;
 * - out of order: within one stream and key, a later write stored before an
 *   earlier one, or the key's records split over partitions (ordered streams);
 *   a transform output not in its input's order;
 * - read_committed anomalies: a read_committed reader that saw a record of an
 *   aborted transaction, part of a transaction whose outcome was unknown, or
 *   a record nobody wrote;
 * - group offset anomalies: a partition's acknowledged commits going back,
 *   a commit ahead of anything the group had read, or the committed offset
 *   read back at the end behind the last acknowledged commit;
 * - transform anomalies: an input record with no output, or an output with
 *   no input;
 * - share group anomalies: a record delivered again after a member's ACCEPT
 *   of it was answered without error, or accepted twice; an acknowledged
 *   record the share group never got, or got and never acknowledged, counts
 *   as lost. Redeliveries before an accepted ACCEPT (a lock run out, a member
 *   killed) are Kafka's contract and only counted (`shareRedeliveries`);
 * - once anomalies: two callers told they won one `once` key, or none told
 *   although every caller heard its answer.
 *
 * Each anomaly keeps a sentence (the first few per kind are printed), and
 * `finalLine` is the campaign's last line.
 */
import { parseCampaignValue, type CampaignHistory, type StoredRecord, type TopicLog } from './history.js';

export interface Verdict {
  records: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  readCommitted: number;
  groupOffsets: number;
  transform: number;
  once: number;
  share: number;
  /** Deliveries to a share group with a delivery count above 1 (allowed; a figure, not an anomaly). */
  shareRedeliveries: number;
  /** Sentences, the first ones of each kind. */
  examples: string[];
}

const EXAMPLES_PER_KIND = 5;

class Tally {
  readonly verdict: Verdict = { records: 0, lost: 0, duplicated: 0, outOfOrder: 0, readCommitted: 0, groupOffsets: 0, transform: 0, once: 0, share: 0, shareRedeliveries: 0, examples: [] };
  private readonly shown = new Map<string, number>();

  add(kind: Exclude<keyof Verdict, 'records' | 'examples' | 'shareRedeliveries'>, sentence: () => string, count = 1): void {
    this.verdict[kind] += count;
    const shown = this.shown.get(kind) ?? 0;
    if (shown < EXAMPLES_PER_KIND) {
      this.verdict.examples.push(`${kind}: ${sentence()}`);
      this.shown.set(kind, shown + 1);
    }
  }
}

export function anomalies(v: Verdict): number {
  return v.lost + v.duplicated + v.outOfOrder + v.readCommitted + v.groupOffsets + v.transform + v.once + v.share;
}

export function check(history: CampaignHistory): Verdict {
  const tally = new Tally();
  const logs = new Map(history.logs.map((l) => [l.topic, l]));
  const counts = new Map<string, Map<string, number>>();
  for (const log of history.logs) counts.set(log.topic, valueCounts(log.records));

  checkWrites(history, counts, tally);
  checkTransactions(history, counts, tally);
  for (const log of history.logs) {
    checkDuplicates(log, counts.get(log.topic)!, tally);
    checkOrder(log, new Set(history.orderedStreams), tally);
    checkUnwritten(log, history, tally);
  }
  checkGroups(history, tally);
  checkShareGroups(history, tally);
  checkTransforms(history, logs, tally);
  checkOnce(history, tally);
  return tally.verdict;
}

function valueCounts(records: readonly StoredRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.value, (counts.get(r.value) ?? 0) + 1);
  return counts;
}

/** Acknowledged writes must be stored; every write counts as a record of the campaign. */
function checkWrites(history: CampaignHistory, counts: Map<string, Map<string, number>>, tally: Tally): void {
  for (const w of history.writes) {
    tally.verdict.records += 1;
    if (w.outcome !== 'acknowledged') continue;
    if (!(counts.get(w.topic)?.get(w.value))) tally.add('lost', () => `${w.value} was acknowledged but ${w.topic} does not hold it`);
  }
}

/** Committed transactions whole, aborted ones invisible, unknown ones all or nothing. */
function checkTransactions(history: CampaignHistory, counts: Map<string, Map<string, number>>, tally: Tally): void {
  for (const t of history.transactions) {
    tally.verdict.records += t.values.length;
    const held = counts.get(t.topic);
    const visible = t.values.filter((v) => held?.get(v));
    if (t.outcome === 'committed') {
      const missing = t.values.length - visible.length;
      if (missing > 0) tally.add('lost', () => `${missing} of the ${t.values.length} records of committed transaction ${t.id} are not in ${t.topic}`, missing);
    } else if (t.outcome === 'aborted' && visible.length > 0) {
      tally.add('readCommitted', () => `read_committed shows ${visible.length} records of aborted transaction ${t.id} (${visible[0]})`, visible.length);
    } else if (t.outcome === 'uncertain' && visible.length > 0 && visible.length < t.values.length) {
      tally.add('readCommitted', () => `read_committed shows ${visible.length} of the ${t.values.length} records of transaction ${t.id}, whose outcome was unknown: half a transaction`, visible.length);
    }
  }
}

function checkDuplicates(log: TopicLog, counts: Map<string, number>, tally: Tally): void {
  for (const [value, n] of counts) if (n > 1) tally.add('duplicated', () => `${log.topic} holds ${value} ${n} times`, n - 1);
}

/** Within an ordered stream, each key in one partition with its sequence numbers rising. */
function checkOrder(log: TopicLog, ordered: ReadonlySet<string>, tally: Tally): void {
  const byKey = new Map<string, StoredRecord[]>();
  for (const r of log.records) {
    const parsed = parseCampaignValue(r.value);
    if (!parsed || !ordered.has(parsed.stream)) continue;
    const id = `${parsed.stream}|${parsed.key}`;
    const list = byKey.get(id);
    if (list) list.push(r);
    else byKey.set(id, [r]);
  }
  for (const [id, records] of byKey) {
    const partitions = new Set(records.map((r) => r.partition));
    if (partitions.size > 1) tally.add('outOfOrder', () => `${log.topic}: key ${id} is split over partitions ${[...partitions].join(', ')}`);
    const sorted = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
    let previous = -1;
    for (const r of sorted) {
      const seq = parseCampaignValue(r.value)!.seq;
      // An equal number is a duplicate, counted as such.
      if (seq < previous) tally.add('outOfOrder', () => `${log.topic} partition ${r.partition} offset ${r.offset}: ${r.value} is stored after sequence ${previous} of its key`);
      previous = Math.max(previous, seq);
    }
  }
}

/** A read_committed log holds only what someone wrote (acknowledged, uncertain, or of a transaction). */
function checkUnwritten(log: TopicLog, history: CampaignHistory, tally: Tally): void {
  const written = new Set<string>();
  for (const w of history.writes) if (w.topic === log.topic) written.add(w.value);
  for (const t of history.transactions) if (t.topic === log.topic && t.outcome !== 'aborted') for (const v of t.values) written.add(v);
  const isOutput = history.transforms.some((t) => t.output === log.topic);
  if (isOutput) return; // an output's records are judged against its input (checkTransforms)
  for (const r of log.records) {
    if (!written.has(r.value) && !isAbortedValue(history, log.topic, r.value)) {
      tally.add('readCommitted', () => `${log.topic} partition ${r.partition} offset ${r.offset} holds ${JSON.stringify(r.value)}, which no client wrote`);
    }
  }
}

function isAbortedValue(history: CampaignHistory, topic: string, value: string): boolean {
  // Counted once already, by checkTransactions.
  return history.transactions.some((t) => t.topic === topic && t.outcome === 'aborted' && t.values.includes(value));
}

/** Every acknowledged record read by each group; commits monotonic and never ahead of the reads. */
function checkGroups(history: CampaignHistory, tally: Tally): void {
  for (const g of history.groups) {
    const read = new Set(g.reads.map((r) => r.value));
    const ackedHere = acknowledgedIn(history, g.topic);
    const unread = ackedHere.filter((v) => !read.has(v));
    if (unread.length > 0) tally.add('lost', () => `${g.protocol} group ${g.group} never read ${unread.length} acknowledged records of ${g.topic}, e.g. ${unread.slice(0, 3).join(', ')}`, unread.length);

    const highestRead = new Map<number, number>();
    for (const r of g.reads) highestRead.set(r.partition, Math.max(highestRead.get(r.partition) ?? -1, r.offset));
    const last = new Map<number, { offset: number; member: string }>();
    for (const c of [...g.commits].sort((a, b) => a.at - b.at)) {
      const before = last.get(c.partition);
      if (before && c.offset < before.offset) {
        tally.add('groupOffsets', () => `${g.group} partition ${c.partition}: ${c.member}'s commit of ${c.offset} was acknowledged after ${before.member}'s of ${before.offset}`);
      }
      if (c.offset > (highestRead.get(c.partition) ?? -1) + 1) {
        tally.add('groupOffsets', () => `${g.group} partition ${c.partition}: ${c.member} committed ${c.offset}, ahead of the last offset the group read (${highestRead.get(c.partition) ?? 'none'})`);
      }
      last.set(c.partition, { offset: c.offset, member: c.member });
    }
    // A commit the client gave up on may still land later, but never one older than an acknowledged commit.
    for (const [partition, acked] of g.final ? last : []) {
      const stored = g.final!.get(partition) ?? -1;
      if (stored < acked.offset) tally.add('groupOffsets', () => `${g.group} partition ${partition}: the group's committed offset reads ${stored} at the end, behind the last acknowledged commit (${acked.member}'s of ${acked.offset})`);
    }
  }
}

/** The values acknowledged to their writers in `topic` (acknowledged writes, committed transactions). */
function acknowledgedIn(history: CampaignHistory, topic: string): string[] {
  return [
    ...history.writes.filter((w) => w.topic === topic && w.outcome === 'acknowledged').map((w) => w.value),
    ...history.transactions.filter((t) => t.topic === topic && t.outcome === 'committed').flatMap((t) => t.values),
  ];
}

/**
 * Every acknowledged record delivered to the share group and acknowledged by
 * a member (an ACCEPT whose answer was lost is taken as uncertain, not lost:
 * the record must then not come back, or it is judged below); after an ACCEPT
 * answered without error, no delivery of that record with a higher delivery
 * count and no second accepted ACCEPT.
 */
function checkShareGroups(history: CampaignHistory, tally: Tally): void {
  for (const g of history.shareGroups) {
    const deliveredValues = new Map<string, string>();
    const acked = new Set(g.acks.map((a) => `${a.partition}@${a.offset}`));
    for (const d of g.deliveries) deliveredValues.set(d.value, `${d.partition}@${d.offset}`);
    const never: string[] = [];
    const unacknowledged: string[] = [];
    for (const value of acknowledgedIn(history, g.topic)) {
      const at = deliveredValues.get(value);
      if (at === undefined) never.push(value);
      else if (!acked.has(at)) unacknowledged.push(value);
    }
    if (never.length > 0) tally.add('lost', () => `share group ${g.group} never got ${never.length} acknowledged records of ${g.topic}, e.g. ${never.slice(0, 3).join(', ')}`, never.length);
    if (unacknowledged.length > 0) tally.add('lost', () => `share group ${g.group} got ${unacknowledged.length} acknowledged records of ${g.topic} that no member acknowledged, e.g. ${unacknowledged.slice(0, 3).join(', ')}`, unacknowledged.length);

    const accepted = new Map<string, { member: string; deliveryCount: number }>();
    for (const a of g.acks) {
      if (!a.accepted) continue;
      const at = `${a.partition}@${a.offset}`;
      const before = accepted.get(at);
      if (before) tally.add('share', () => `${g.group}: ${g.topic} ${at} accepted twice, by ${before.member} (delivery ${before.deliveryCount}) and by ${a.member} (delivery ${a.deliveryCount})`);
      if (!before || a.deliveryCount < before.deliveryCount) accepted.set(at, { member: a.member, deliveryCount: a.deliveryCount });
    }
    for (const d of g.deliveries) {
      if (d.deliveryCount > 1) tally.verdict.shareRedeliveries += 1;
      const a = accepted.get(`${d.partition}@${d.offset}`);
      if (a && d.deliveryCount > a.deliveryCount) {
        tally.add('share', () => `${g.group}: ${g.topic} ${d.partition}@${d.offset} delivered to ${d.member} again (delivery ${d.deliveryCount}) after ${a.member}'s ACCEPT of delivery ${a.deliveryCount} was answered without error`);
      }
    }
  }
}

/** Each input record's transform once in the output, same partition, in the input's order; nothing else there. */
function checkTransforms(history: CampaignHistory, logs: Map<string, TopicLog>, tally: Tally): void {
  for (const t of history.transforms) {
    const input = logs.get(t.input);
    const output = logs.get(t.output);
    if (!input || !output) {
      tally.add('transform', () => `the transform ${t.input} -> ${t.output} has no log read back for ${input ? t.output : t.input}`);
      continue;
    }
    const expected = new Map<string, StoredRecord>();
    for (const r of input.records) expected.set(t.transform(r.value), r);
    const seen = new Map<string, number>();
    const outputOrder = new Map<number, StoredRecord[]>();
    for (const r of output.records) {
      seen.set(r.value, (seen.get(r.value) ?? 0) + 1);
      const source = expected.get(r.value);
      if (!source) {
        tally.add('transform', () => `${t.output} partition ${r.partition} offset ${r.offset} holds ${r.value}, the transform of no input record`);
        continue;
      }
      if (source.partition !== r.partition) tally.add('transform', () => `${r.value} is in ${t.output} partition ${r.partition}, its input in ${source.partition}`);
      const list = outputOrder.get(r.partition) ?? [];
      list.push(r);
      outputOrder.set(r.partition, list);
    }
    // An output held twice is counted by checkDuplicates, as in any topic.
    for (const [value, source] of expected) {
      if (!seen.has(value)) tally.add('transform', () => `${t.input} partition ${source.partition} offset ${source.offset} (${source.value}) has no output in ${t.output}`);
    }
    for (const [partition, records] of outputOrder) {
      let previous = -1;
      for (const r of [...records].sort((a, b) => a.offset - b.offset)) {
        const inputOffset = expected.get(r.value)!.offset;
        if (inputOffset < previous) tally.add('outOfOrder', () => `${t.output} partition ${partition} offset ${r.offset}: ${r.value} follows the output of a later input record`);
        previous = Math.max(previous, inputOffset);
      }
    }
  }
}

function checkOnce(history: CampaignHistory, tally: Tally): void {
  for (const o of history.once) {
    const winners = o.attempts.filter((a) => a.outcome === 'won').map((a) => a.caller);
    if (winners.length > 1) tally.add('once', () => `once key ${o.key} was won by ${winners.length} callers (${winners.join(', ')})`);
    if (winners.length === 0 && o.attempts.length > 0 && o.attempts.every((a) => a.outcome === 'lost')) {
      tally.add('once', () => `once key ${o.key} was lost by all ${o.attempts.length} callers and won by none`);
    }
  }
}

/** The campaign's last line. */
export function finalLine(v: Verdict, faults: number, primaryFaults: number): string {
  return `campaign: ${v.records} records, ${faults} faults (${primaryFaults} of the PostgreSQL primary), ${v.lost} lost, ${v.duplicated} duplicated, ${v.outOfOrder} out of order, ${v.readCommitted} read_committed anomalies`;
}

/** The checks the last line has no room for, and the examples. */
export function detailLines(v: Verdict): string[] {
  return [`checks: ${v.groupOffsets} group offset anomalies, ${v.transform} transform anomalies, ${v.once} once anomalies, ${v.share} share group anomalies (${v.shareRedeliveries} redeliveries)`, ...v.examples.map((e) => `  ${e}`)];
}
