/**
 * The campaign's checker catches what it claims to: a clean history passes
 * with zeros, and each planted anomaly (an acknowledged record missing, a
 * record stored twice, a key's records swapped, an aborted transaction
 * visible to read_committed, half an uncertain transaction, a commit going
 * back or ahead of the reads, a transform output missing or doubled, two
 * winners of a once key, a share group record delivered again after its
 * accepted ACCEPT or never delivered) is counted under its kind, with a
 * sentence.
 */
import { describe, expect, it } from 'vitest';
import { anomalies, check, finalLine } from './checker.js';
import { campaignValue, emptyHistory, type CampaignHistory, type StoredRecord } from './history.js';

const copy = (v: string) => `copied:${v}`;

/** Two keys of one idempotent stream in two partitions, a committed and an aborted transaction, a group, a transform, a once key. */
function cleanHistory(): CampaignHistory {
  const h = emptyHistory();
  h.orderedStreams = ['idem', 'txn'];
  const input: StoredRecord[] = [];
  for (let seq = 0; seq < 4; seq++) {
    for (const [partition, key] of [[0, 'a'], [1, 'b']] as const) {
      const value = campaignValue('idem', key, seq);
      h.writes.push({ topic: 'in', value, outcome: 'acknowledged' });
      input.push({ partition, offset: seq, value });
    }
  }
  h.writes.push({ topic: 'in', value: campaignValue('idem', 'a', 4), outcome: 'uncertain' }); // never stored: fine
  h.transactions.push({ id: 'txn:0', topic: 'tx', values: [campaignValue('txn', 'a', 0), campaignValue('txn', 'a', 1)], outcome: 'committed' });
  h.transactions.push({ id: 'txn:1', topic: 'tx', values: [campaignValue('txn', 'a', 2)], outcome: 'aborted' });
  h.transactions.push({ id: 'txn:2', topic: 'tx', values: [campaignValue('txn', 'a', 3), campaignValue('txn', 'a', 4)], outcome: 'uncertain' });
  h.logs.push({ topic: 'in', records: input });
  h.logs.push({
    topic: 'tx',
    records: [0, 1, 3, 4].map((seq, offset) => ({ partition: 0, offset: offset === 0 ? 0 : offset + 1, value: campaignValue('txn', 'a', seq) })),
  });
  h.logs.push({ topic: 'out', records: input.map((r) => ({ ...r, value: copy(r.value) })) });
  h.transforms.push({ input: 'in', output: 'out', transform: copy });
  h.groups.push({
    group: 'g',
    topic: 'in',
    protocol: 'classic',
    reads: input.map((r) => ({ member: r.partition === 0 ? 'm1' : 'm2', ...r })),
    commits: [
      { member: 'm1', partition: 0, offset: 2, at: 1 },
      { member: 'm1', partition: 0, offset: 4, at: 2 },
      { member: 'm2', partition: 1, offset: 4, at: 3 },
    ],
    final: new Map([
      [0, 4],
      [1, 4],
    ]),
  });
  h.once.push({ key: 'k', attempts: [{ caller: 'x', outcome: 'won' }, { caller: 'y', outcome: 'lost' }] });
  // s2 is killed holding idem|a|1, which comes back to s1 as delivery 2; idem|b|3's ACCEPT has no answer (uncertain).
  const share = { group: 's', topic: 'in', deliveries: [] as CampaignHistory['shareGroups'][number]['deliveries'], acks: [] as CampaignHistory['shareGroups'][number]['acks'] };
  share.deliveries.push({ member: 's2', partition: 0, offset: 1, value: 'idem|a|1', deliveryCount: 1 });
  for (const r of input) {
    const deliveryCount = r.value === 'idem|a|1' ? 2 : 1;
    share.deliveries.push({ member: 's1', ...r, deliveryCount });
    share.acks.push({ member: 's1', partition: r.partition, offset: r.offset, deliveryCount, accepted: r.value !== 'idem|b|3' });
  }
  h.shareGroups.push(share);
  return h;
}

function logOf(h: CampaignHistory, topic: string): StoredRecord[] {
  return h.logs.find((l) => l.topic === topic)!.records;
}

describe('the fault campaign checker', () => {
  it('passes a clean history with every count zero and counts its records', () => {
    const v = check(cleanHistory());
    expect(v.examples).toEqual([]);
    expect(anomalies(v)).toBe(0);
    expect(v.shareRedeliveries).toBe(1);
    expect(v.records).toBe(9 + 5);
    expect(finalLine(v, 7, 0)).toBe('campaign: 14 records, 7 faults (0 of the PostgreSQL primary), 0 lost, 0 duplicated, 0 out of order, 0 read_committed anomalies');
  });

  it('counts an acknowledged record the topic lacks as lost, and the group that could not read it', () => {
    const h = cleanHistory();
    const input = logOf(h, 'in');
    input.splice(input.findIndex((r) => r.value === 'idem|b|2'), 1);
    h.groups[0]!.reads = h.groups[0]!.reads.filter((r) => r.value !== 'idem|b|2');
    const v = check(h);
    expect(v.lost).toBe(2);
    expect(v.examples.join('\n')).toMatch(/idem\|b\|2 was acknowledged but in does not hold it/);
    expect(v.examples.join('\n')).toMatch(/classic group g never read 1 acknowledged records/);
  });

  it('counts a committed transaction missing a record as lost', () => {
    const h = cleanHistory();
    logOf(h, 'tx').shift();
    expect(check(h).lost).toBe(1);
  });

  it('counts a record stored twice as duplicated', () => {
    const h = cleanHistory();
    const input = logOf(h, 'in');
    input.push({ partition: 0, offset: 4, value: 'idem|a|3' });
    h.logs.find((l) => l.topic === 'out')!.records.push({ partition: 0, offset: 4, value: copy('idem|a|3') });
    const v = check(h);
    expect(v.duplicated).toBe(2); // once in the input, once in the transform's output
    expect(v.outOfOrder).toBe(0);
    expect(v.examples.join('\n')).toMatch(/in holds idem\|a\|3 2 times/);
  });

  it("counts a key's records stored out of their order, and a key split over partitions", () => {
    const h = cleanHistory();
    h.transforms = []; // the output would be out of its input's order too
    const input = logOf(h, 'in');
    const first = input.find((r) => r.value === 'idem|a|1')!;
    const second = input.find((r) => r.value === 'idem|a|2')!;
    [first.offset, second.offset] = [second.offset, first.offset];
    expect(check(h).outOfOrder).toBe(1);
    input.find((r) => r.value === 'idem|b|3')!.partition = 2;
    const v = check(h);
    expect(v.outOfOrder).toBe(2);
    expect(v.examples.join('\n')).toMatch(/key idem\|b is split over partitions 1, 2/);
  });

  it('counts an aborted record visible to read_committed, and half of a transaction whose outcome was unknown', () => {
    const h = cleanHistory();
    logOf(h, 'tx').push({ partition: 0, offset: 9, value: 'txn|a|2' });
    let v = check(h);
    expect(v.readCommitted).toBe(1);
    expect(v.examples.join('\n')).toMatch(/aborted transaction txn:1/);
    const half = cleanHistory();
    const tx = logOf(half, 'tx');
    tx.splice(tx.findIndex((r) => r.value === 'txn|a|4'), 1);
    v = check(half);
    expect(v.readCommitted).toBe(1);
    expect(v.examples.join('\n')).toMatch(/half a transaction/);
  });

  it('counts a record nobody wrote as a read_committed anomaly', () => {
    const h = cleanHistory();
    logOf(h, 'in').push({ partition: 1, offset: 9, value: 'garbage' });
    expect(check(h).readCommitted).toBe(1);
  });

  it('counts a group commit that goes back or runs ahead of what the group read', () => {
    const h = cleanHistory();
    h.groups[0]!.commits.push({ member: 'm2', partition: 0, offset: 3, at: 4 });
    h.groups[0]!.commits.push({ member: 'm2', partition: 1, offset: 9, at: 5 });
    h.groups[0]!.final!.set(1, 9);
    const v = check(h);
    expect(v.groupOffsets).toBe(2);
    expect(v.examples.join('\n')).toMatch(/commit of 3 was acknowledged after m1's of 4/);
    expect(v.examples.join('\n')).toMatch(/committed 9, ahead of the last offset the group read \(3\)/);
  });

  it("counts a group whose committed offset reads back behind its last acknowledged commit (a stale commit landed late)", () => {
    const h = cleanHistory();
    h.groups[0]!.final!.set(1, 3);
    const v = check(h);
    expect(v.groupOffsets).toBe(1);
    expect(v.examples.join('\n')).toMatch(/partition 1: the group's committed offset reads 3 at the end, behind the last acknowledged commit \(m2's of 4\)/);
  });

  it('counts a transform output missing, doubled, out of order, or of no input', () => {
    const h = cleanHistory();
    const out = logOf(h, 'out');
    out.splice(out.findIndex((r) => r.value === copy('idem|a|0')), 1);
    out.push({ partition: 1, offset: 8, value: copy('idem|b|1') });
    out.push({ partition: 1, offset: 9, value: 'copied:nothing' });
    const v = check(h);
    expect(v.transform).toBe(2);
    expect(v.duplicated).toBe(1);
    expect(v.outOfOrder).toBe(1);
  });

  it('counts a once key won twice, or lost by every caller', () => {
    const h = cleanHistory();
    h.once.push({ key: 'twice', attempts: [{ caller: 'x', outcome: 'won' }, { caller: 'y', outcome: 'won' }] });
    h.once.push({ key: 'never', attempts: [{ caller: 'x', outcome: 'lost' }, { caller: 'y', outcome: 'lost' }] });
    h.once.push({ key: 'unheard', attempts: [{ caller: 'x', outcome: 'unknown' }, { caller: 'y', outcome: 'lost' }] });
    expect(check(h).once).toBe(2);
  });

  it('counts a share group record delivered again after an accepted ACCEPT, or accepted twice', () => {
    const h = cleanHistory();
    const share = h.shareGroups[0]!;
    share.deliveries.push({ member: 's2', partition: 1, offset: 2, value: 'idem|b|2', deliveryCount: 2 });
    let v = check(h);
    expect(v.share).toBe(1);
    expect(v.shareRedeliveries).toBe(2);
    expect(v.examples.join('\n')).toMatch(/in 1@2 delivered to s2 again \(delivery 2\) after s1's ACCEPT of delivery 1 was answered without error/);
    share.acks.push({ member: 's2', partition: 1, offset: 2, deliveryCount: 2, accepted: true });
    v = check(h);
    expect(v.share).toBe(2);
    expect(v.examples.join('\n')).toMatch(/in 1@2 accepted twice, by s1 \(delivery 1\) and by s2 \(delivery 2\)/);
  });

  it('counts an acknowledged record the share group never got, or got and never acknowledged, as lost', () => {
    const h = cleanHistory();
    const share = h.shareGroups[0]!;
    share.deliveries = share.deliveries.filter((d) => d.value !== 'idem|b|0');
    share.acks = share.acks.filter((a) => !(a.partition === 0 && a.offset === 3));
    const v = check(h);
    expect(v.lost).toBe(2);
    expect(v.share).toBe(0);
    expect(v.examples.join('\n')).toMatch(/share group s never got 1 acknowledged records of in, e.g. idem\|b\|0/);
    expect(v.examples.join('\n')).toMatch(/share group s got 1 acknowledged records of in that no member acknowledged, e.g. idem\|a\|3/);
  });
});
