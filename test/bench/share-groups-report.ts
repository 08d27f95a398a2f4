/**
 * The share-group benchmark's figures (./share-groups.bench.ts): their
 * types, the goals of issues 28 and 31 judged on them, and the chart drawn
 * from them (SVG by hand, no charting dependency). `npx tsx
 * test/bench/share-groups-draw.ts [FILE]` redraws a results file.
 */
export type ShareBrokerName = 'kafka' | 'memory' | 'postgres' | 'standby';

export interface ReadFigures {
  records: number;
  seconds: number;
  /** Records acquired and acknowledged (share) or read and committed (group) per second. */
  recordsPerSecond: number;
  firstRecordAfterMs: number;
  brokerMicrosPerRecord: number;
}

export interface ShareBrokerFigures {
  produceRecordsPerSecond?: number;
  groupRuns: ReadFigures[];
  shareRuns: ReadFigures[];
  /** The better run of each. */
  group?: ReadFigures;
  share?: ReadFigures;
  redelivery?: { redelivered: number; p50: number; p99: number; max: number; wrongDeliveryCount: number };
  peakMemoryMB?: number;
  wallSeconds?: number;
  error?: string;
}

export interface Judged {
  what: string;
  figure: string;
  /** Absent: a figure shown, not a goal. */
  pass?: boolean;
}

export interface ShareBenchResults {
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; model: string; loadAverageAfter: Record<string, number[]>; node: string };
  settings: Record<string, unknown>;
  brokers: Partial<Record<ShareBrokerName, ShareBrokerFigures>>;
  judged: Judged[];
}

const NAMES: Record<ShareBrokerName, string> = { kafka: 'Apache Kafka 4.4', memory: 'gateway, memory', postgres: 'gateway, PostgreSQL', standby: 'gateway, PostgreSQL + sync standby' };
const ORDER: ShareBrokerName[] = ['kafka', 'memory', 'postgres', 'standby'];
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || !(b > 0) ? undefined : a / b);
const times = (r: number) => `${r.toFixed(2)}x`;

/**
 * Share ÷ consumer group on each broker (goal: at least 0.7 on the gateway),
 * the gateway's share groups ÷ Kafka's (goal: at least 1), and, shown, its
 * redelivery p99 and CPU per record acknowledged ÷ Kafka's.
 */
export function judge(results: ShareBenchResults): Judged[] {
  const out: Judged[] = [];
  const kafka = results.brokers.kafka;
  for (const name of ORDER) {
    const f = results.brokers[name];
    if (!f) continue;
    const gateway = name !== 'kafka';
    const own = ratio(f.share?.recordsPerSecond, f.group?.recordsPerSecond);
    if (own !== undefined) out.push({ what: `${NAMES[name]}: share group ÷ consumer group, records/s${gateway ? ' (goal ≥ 0.7x)' : ''}`, figure: times(own), pass: gateway ? own >= 0.7 : undefined });
    if (!gateway || !kafka) continue;
    const versus = ratio(f.share?.recordsPerSecond, kafka.share?.recordsPerSecond);
    if (versus !== undefined) out.push({ what: `${NAMES[name]}: share group ÷ Kafka's share group, records/s (goal ≥ 1x)`, figure: times(versus), pass: versus >= 1 });
    const p99 = ratio(f.redelivery?.p99, kafka.redelivery?.p99);
    if (p99 !== undefined) out.push({ what: `${NAMES[name]}: redelivery p99 ÷ Kafka's (below 1 is quicker)`, figure: times(p99) });
    const cpu = ratio(f.share?.brokerMicrosPerRecord, kafka.share?.brokerMicrosPerRecord);
    if (cpu !== undefined) out.push({ what: `${NAMES[name]}: broker CPU per share record ÷ Kafka's (below 1 is cheaper)`, figure: times(cpu) });
  }
  return out;
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const compact = (n: number) => (n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(n >= 10 ? 0 : 1));

interface Bar { label: string; value: number; colour: string; note?: string }

/** One panel: a bar per entry on a linear scale from 0, each labelled. */
function panel(out: string[], x0: number, y0: number, width: number, title: string, bars: Bar[], unit: string): number {
  const bar = 14;
  const max = Math.max(1e-9, ...bars.map((b) => b.value));
  out.push(`<text x="${x0}" y="${y0}" font-weight="bold">${escape(title)}</text>`);
  bars.forEach((b, i) => {
    const y = y0 + 8 + i * (bar + 4);
    const w = Math.max(1, (b.value / max) * (width - 400));
    out.push(`<text x="${x0}" y="${y + bar - 3}">${escape(b.label)}</text>`);
    out.push(`<rect x="${x0 + 150}" y="${y}" width="${w.toFixed(1)}" height="${bar}" fill="${b.colour}"/>`);
    out.push(`<text x="${(x0 + 154 + w).toFixed(1)}" y="${y + bar - 3}" font-size="9">${escape(compact(b.value) + unit + (b.note ? ` · ${b.note}` : ''))}</text>`);
  });
  return y0 + 8 + bars.length * (bar + 4) + 24;
}

/** The chart: records/s of the consumer group and the share group per broker, then redelivery p50 and p99. */
export function renderShareChart(results: ShareBenchResults): string {
  const width = 900;
  const present = ORDER.filter((n) => results.brokers[n] && !results.brokers[n]!.error);
  const kafka = results.brokers.kafka;
  const out: string[] = [];
  const throughput: Bar[] = present.flatMap((n) => {
    const f = results.brokers[n]!;
    const shareNote = [ratio(f.share?.recordsPerSecond, f.group?.recordsPerSecond), n === 'kafka' ? undefined : ratio(f.share?.recordsPerSecond, kafka?.share?.recordsPerSecond)];
    return [
      { label: `${NAMES[n]}: group`, value: f.group?.recordsPerSecond ?? 0, colour: '#9e9e9e' },
      { label: `${NAMES[n]}: share`, value: f.share?.recordsPerSecond ?? 0, colour: n === 'kafka' ? '#222222' : '#3a9e6b', note: [shareNote[0] === undefined ? '' : `${shareNote[0].toFixed(2)}× group`, shareNote[1] === undefined ? '' : `${shareNote[1].toFixed(2)}× Kafka share`].filter(Boolean).join(', ') },
    ];
  });
  const redelivery: Bar[] = present.flatMap((n) => {
    const r = results.brokers[n]!.redelivery;
    if (!r) return [];
    return [
      { label: `${NAMES[n]}: p50`, value: r.p50, colour: '#c5b358' },
      { label: `${NAMES[n]}: p99`, value: r.p99, colour: n === 'kafka' ? '#222222' : '#e0703a', note: n === 'kafka' ? undefined : `${(ratio(r.p99, kafka?.redelivery?.p99) ?? NaN).toFixed(2)}× Kafka` },
    ];
  });
  const load = Object.entries(results.machine.loadAverageAfter).map(([b, l]) => `${b} ${l[0]!.toFixed(1)}`).join(', ');
  out.push(`<text x="10" y="20" font-size="14" font-weight="bold">Share groups (KIP-932) beside consumer groups and Apache Kafka 4.4, one run: ${escape(results.startedAt.slice(0, 16).replace('T', ' '))} UTC</text>`);
  out.push(`<text x="10" y="38" fill="#555">${results.machine.cpus} cores; 1-minute load average after each broker: ${escape(load)}; Kafka's Java clients; ${escape(String(results.settings['records']))} records of ${escape(String(results.settings['recordBytes']))} B</text>`);
  let y = panel(out, 10, 64, width, 'records acquired and acknowledged (share) or read and committed (group) per second, the better of the rounds', throughput, '/s');
  y = panel(out, 10, y, width, 'redelivery latency after RELEASE, ms (lower is quicker)', redelivery, ' ms');
  const failed = ORDER.filter((n) => results.brokers[n]?.error).map((n) => `${NAMES[n]} failed: ${results.brokers[n]!.error!.slice(0, 90)}`);
  for (const line of failed) out.push(`<text x="10" y="${(y += 14)}" fill="#b00">${escape(line)}</text>`);
  const goals = results.judged.filter((j) => j.pass !== undefined).map((j) => `${j.pass ? 'PASS' : 'SHORT'} ${j.figure} ${j.what.replace(/ \(goal.*\)/, '')}`);
  for (const line of goals) out.push(`<text x="10" y="${(y += 14)}" fill="#333">${escape(line)}</text>`);
  out.push(`<text x="10" y="${(y += 18)}" fill="#777">npm run bench:share-groups · bench-results/share-groups.json · docs/benchmarks.md</text>`);
  const height = y + 12;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    ...out,
    '</svg>',
  ].join('\n') + '\n';
}
