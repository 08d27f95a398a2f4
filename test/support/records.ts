/**
 * The records a test sends and the records a reader gets back, in one shape
 * whatever the client, and the comparisons the suites make on them: the same
 * records per partition, in order, with keys, values, headers and timestamps
 * intact; or exactly once each, in order, by the sequence number in the value.
 */

/** A header as [name, value]; a list, because Kafka keeps order and allows repeated names. */
export type Header = [string, string];

export interface SentRecord {
  partition: number;
  key: string | null;
  value: string;
  headers: Header[];
  /** Milliseconds since the epoch, as the producer set it (CreateTime). */
  timestamp: number;
}

export interface ReadRecord extends SentRecord {
  offset: number;
}

export interface RecordPlanOptions {
  /** Names the test in values and keys, so a stray record from elsewhere stands out. */
  label: string;
  partitions: number;
  perPartition: number;
  /** First timestamp; each record's is one millisecond later than the one before. */
  baseTimestamp?: number;
  /** Headers every record carries besides its own `seq` header. */
  headers?: Header[];
}

/**
 * Keyed records with headers spread over partitions: record i of partition p
 * has key `label-p-i`, value `label:p:i:<payload>`, headers `seq=i` plus the
 * shared ones, and a distinct timestamp.
 */
export function planRecords(options: RecordPlanOptions): SentRecord[] {
  const { label, partitions, perPartition, headers = [['origin', label]] } = options;
  const base = options.baseTimestamp ?? Date.UTC(2024, 0, 2, 3, 4, 5);
  const records: SentRecord[] = [];
  for (let i = 0; i < perPartition; i++) {
    for (let p = 0; p < partitions; p++) {
      records.push({
        partition: p,
        key: `${label}-${p}-${i}`,
        // A compressible but varied payload, so codecs have something to do.
        value: `${label}:${p}:${i}:${'queen'.repeat(1 + (i % 7))}`,
        headers: [['seq', String(i)], ...headers],
        timestamp: base + records.length,
      });
    }
  }
  return records;
}

export function byPartition<T extends { partition: number }>(records: readonly T[]): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const r of records) {
    const group = groups.get(r.partition);
    if (group) group.push(r);
    else groups.set(r.partition, [r]);
  }
  return groups;
}

export interface CompareOptions {
  /**
   * 'exact' (default) when the producer set each timestamp; a window when the
   * client stamps records itself (kcat), so each must fall inside it.
   */
  timestamps?: 'exact' | { from: number; to: number };
}

function show(r: SentRecord | ReadRecord | undefined): string {
  return r === undefined ? 'nothing' : JSON.stringify(r);
}

/**
 * Throws, with a sentence saying which partition and which record differ, unless
 * `read` holds exactly the `sent` records: per partition in the order sent, at
 * consecutive offsets, with the same key, value, headers and timestamp.
 */
export function expectSameRecords(sent: readonly SentRecord[], read: readonly ReadRecord[], options: CompareOptions = {}): void {
  const problems: string[] = [];
  const want = byPartition(sent);
  const got = byPartition(read);
  for (const p of new Set([...want.keys(), ...got.keys()])) {
    const w = want.get(p) ?? [];
    const g = [...(got.get(p) ?? [])].sort((a, b) => a.offset - b.offset);
    if (w.length !== g.length) problems.push(`partition ${p}: sent ${w.length} records, read ${g.length}`);
    for (let i = 0; i < Math.max(w.length, g.length); i++) {
      const a = w[i];
      const b = g[i];
      const mismatch = recordMismatch(a, b, options);
      if (mismatch) {
        problems.push(`partition ${p}, record ${i}: ${mismatch}; sent ${show(a)}, read ${show(b)}`);
        break;
      }
      if (i > 0 && b && g[i - 1] && b.offset !== g[i - 1]!.offset + 1) {
        problems.push(`partition ${p}: offsets jump from ${g[i - 1]!.offset} to ${b.offset}`);
        break;
      }
    }
  }
  if (problems.length > 0) throw new Error(`records read back differ from those sent:\n  ${problems.join('\n  ')}`);
}

function recordMismatch(a: SentRecord | undefined, b: ReadRecord | undefined, options: CompareOptions): string | null {
  if (!a) return 'an extra record was read';
  if (!b) return 'a record is missing';
  if (a.key !== b.key) return 'keys differ';
  if (a.value !== b.value) return 'values differ';
  if (JSON.stringify(a.headers) !== JSON.stringify(b.headers)) return 'headers differ';
  const window = options.timestamps ?? 'exact';
  if (window === 'exact') {
    if (a.timestamp !== b.timestamp) return 'timestamps differ';
  } else if (b.timestamp < window.from || b.timestamp > window.to) {
    return `timestamp ${b.timestamp} is outside the produce window ${window.from}..${window.to}`;
  }
  return null;
}

/** A value that carries its producer's sequence number: `label:<seq>`. */
export function sequencedValue(label: string, seq: number): string {
  return `${label}:${seq}`;
}

/**
 * Throws unless `read` holds each sequence number 0..total-1 exactly once, and
 * within each partition in increasing order (the order the producer sent).
 * `read` entries carry the value written by `sequencedValue`.
 */
export function expectExactlyOnceInOrder(
  label: string,
  total: number,
  read: readonly { partition: number; offset: number; value: string }[],
): void {
  const seen = new Map<number, number>();
  const problems: string[] = [];
  for (const [p, records] of byPartition(read)) {
    const ordered = [...records].sort((a, b) => a.offset - b.offset);
    let previous = -1;
    for (const r of ordered) {
      const seq = parseSequence(label, r.value);
      if (seq === null) {
        problems.push(`partition ${p} offset ${r.offset} holds a value not written by this test: ${JSON.stringify(r.value)}`);
        continue;
      }
      seen.set(seq, (seen.get(seq) ?? 0) + 1);
      if (seq <= previous && problems.length < 20) {
        problems.push(`partition ${p} offset ${r.offset}: sequence ${seq} follows ${previous} (out of order or duplicated)`);
      }
      previous = Math.max(previous, seq);
    }
  }
  const duplicated = [...seen].filter(([, n]) => n > 1).map(([seq, n]) => `${seq}×${n}`);
  const missing: number[] = [];
  for (let seq = 0; seq < total; seq++) if (!seen.has(seq)) missing.push(seq);
  if (duplicated.length > 0) {
    problems.push(`${duplicated.length} sequence numbers arrived more than once, e.g. ${duplicated.slice(0, 10).join(', ')}`);
  }
  if (missing.length > 0) {
    problems.push(`${missing.length} of ${total} sequence numbers never arrived, e.g. ${summarizeRanges(missing)}`);
  }
  if (read.length !== total) problems.push(`read ${read.length} records, expected exactly ${total}`);
  if (problems.length > 0) throw new Error(`exactly-once, in-order delivery failed:\n  ${problems.slice(0, 25).join('\n  ')}`);
}

function parseSequence(label: string, value: string): number | null {
  if (!value.startsWith(`${label}:`)) return null;
  const n = Number(value.slice(label.length + 1));
  return Number.isInteger(n) ? n : null;
}

/** "3-9, 15, 40-41 …" for the first few runs of a sorted list. */
function summarizeRanges(sorted: number[]): string {
  const runs: string[] = [];
  let start = sorted[0]!;
  let end = start;
  for (const n of sorted.slice(1)) {
    if (n === end + 1) {
      end = n;
      continue;
    }
    runs.push(start === end ? `${start}` : `${start}-${end}`);
    start = end = n;
    if (runs.length >= 10) break;
  }
  if (runs.length < 10) runs.push(start === end ? `${start}` : `${start}-${end}`);
  return runs.join(', ') + (runs.length >= 10 ? ' …' : '');
}

/** A topic name no other test, file or run uses. */
export function uniqueTopic(prefix: string): string {
  return `${prefix}-${process.pid.toString(36)}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
