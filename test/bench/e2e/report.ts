/**
 * What the figures of one configuration say: the offered load the latency
 * phases of Kafka and both engines share, each engine's figures over Apache
 * Kafka's, the printed table (each broker beside its ceilings and the peers,
 * as ratios), and the targets (issue 8's, and those against Kafka), each
 * PASS or SHORT.
 */
import type { BrokerFigures, BrokerName, ConfigurationResult, VersusKafka } from './run.js';

type Row = BrokerName | 'rawPostgres';

export const ROW_NAMES: Record<Row, string> = {
  null: 'null broker', rawPostgres: 'raw pg', mock: 'mock (peer 2)', kafka: 'Apache Kafka', memory: 'memory', postgres: 'postgres', standby: 'postgres + sync standby',
};
export const ROW_ORDER: Row[] = ['null', 'rawPostgres', 'mock', 'kafka', 'memory', 'postgres', 'standby'];
const ORDER = ROW_ORDER;
/** The gateway's rows: each is divided by Apache Kafka's. */
export const ENGINES = ['memory', 'postgres', 'standby'] as const;
const isEngine = (row: Row) => (ENGINES as readonly Row[]).includes(row);
/** The durable rows: the PostgreSQL engine alone and with a synchronous standby. */
const DURABLE = ['postgres', 'standby'] as const;
const ENGINE_NAMES: Record<(typeof ENGINES)[number], string> = { memory: 'memory engine', postgres: 'postgres engine', standby: 'postgres engine with a sync standby' };
/** Issue 31's bound on the durable engine's p99 end-to-end at the shared load, at 64 partitions. */
export const DURABLE_P99_MS = 50;

export function brokerRows(result: ConfigurationResult): [Row, BrokerFigures][] {
  return ORDER.filter((r) => result.brokers[r]).map((r) => [r, result.brokers[r]!]);
}

export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || !(b > 0) || !Number.isFinite(a) ? undefined : a / b;
}

const pct = (r: number | undefined) => (r === undefined ? '' : `${Math.round(r * 100)}%`);
const num = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n) ? '' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The ceiling a broker's produce figure is held against: the null broker, and for PostgreSQL the raw writes too. */
function ceilingsOf(row: Row, result: ConfigurationResult): { null?: number; raw?: number; lower?: number; mock?: number } {
  const rate = (r: Row) => result.brokers[r]?.produce?.recordsPerSecond;
  const own = rate(row);
  return {
    null: row === 'null' ? undefined : ratio(own, rate('null')),
    raw: row === 'postgres' ? ratio(own, rate('rawPostgres')) : undefined,
    lower: row === 'postgres' ? lowerCeilingRatio(result) : undefined,
    mock: isEngine(row) ? ratio(own, rate('mock')) : undefined,
  };
}

/**
 * The PostgreSQL engine against the lower of its two ceilings: the raw writes
 * run with no client beside them, so where the client's own ceiling (the
 * null broker) is lower, no engine could reach the raw figure.
 */
export function lowerCeilingRatio(result: ConfigurationResult): number | undefined {
  const rate = (r: Row) => result.brokers[r]?.produce?.recordsPerSecond;
  const nullRate = rate('null');
  const raw = rate('rawPostgres');
  if (nullRate === undefined || raw === undefined) return undefined;
  return ratio(rate('postgres'), Math.min(nullRate, raw));
}

/** The brokers whose latency phases share one offered load. */
export const SHARED_LATENCY_LOAD: BrokerName[] = ['kafka', 'memory', 'postgres', 'standby'];

/** Half the end-to-end maximum a broker reached (or of the lower of produce and consume without one). */
export function halfMaximum(figures: BrokerFigures): number | undefined {
  const maximum = figures.endToEnd?.recordsPerSecond ?? Math.min(figures.produce?.recordsPerSecond ?? NaN, figures.consume?.recordsPerSecond ?? Infinity);
  return Number.isFinite(maximum) && maximum > 0 ? Math.max(100, Math.round(maximum / 2)) : undefined;
}

/**
 * The offered load Kafka and both engines are measured at: half the lowest
 * of their end-to-end maxima, a load each of them carries with room to spare
 * on this machine, so each latency is that of a broker keeping up.
 */
export function sharedLatencyRate(result: ConfigurationResult): number | undefined {
  const halves = SHARED_LATENCY_LOAD.map((b) => (result.brokers[b] ? halfMaximum(result.brokers[b]!) : undefined)).filter((h): h is number => h !== undefined);
  return halves.length > 0 ? Math.min(...halves) : undefined;
}

/** Each engine's figures over Kafka's in the same configuration; absent without a Kafka row. */
export function versusKafka(result: ConfigurationResult): ConfigurationResult['versusKafka'] {
  const kafka = result.brokers.kafka;
  if (!kafka) return undefined;
  const out: NonNullable<ConfigurationResult['versusKafka']> = {};
  for (const engine of ENGINES) {
    const f = result.brokers[engine];
    if (!f) continue;
    // Latencies compare only at the same offered load.
    const sameLoad = f.latency !== undefined && kafka.latency !== undefined && f.latency.offeredRate === kafka.latency.offeredRate;
    out[engine] = {
      produce: ratio(f.produce?.recordsPerSecond, kafka.produce?.recordsPerSecond),
      consume: ratio(f.consume?.recordsPerSecond, kafka.consume?.recordsPerSecond),
      endToEnd: ratio(f.endToEnd?.recordsPerSecond, kafka.endToEnd?.recordsPerSecond),
      p50: sameLoad ? ratio(f.latency!.p50, kafka.latency!.p50) : undefined,
      p99: sameLoad ? ratio(f.latency!.p99, kafka.latency!.p99) : undefined,
      produceMicrosPerRecord: ratio(f.produce?.brokerMicrosPerRecord, kafka.produce?.brokerMicrosPerRecord),
      produceWithStorageMicrosPerRecord: ratio(f.produce?.withStorageMicrosPerRecord, kafka.produce?.brokerMicrosPerRecord),
      peakMemory: ratio(f.peakMemoryMB, kafka.peakMemoryMB),
      residentMemory: ratio(f.residentMB, kafka.residentMB),
    };
  }
  return out;
}

/** The columns of the gateway ÷ Kafka tables (printed and Markdown), each with how to read it. */
export const VERSUS_KAFKA_COLUMNS: { key: keyof VersusKafka; title: string }[] = [
  { key: 'produce', title: 'produce' },
  { key: 'consume', title: 'consume' },
  { key: 'endToEnd', title: 'e2e max' },
  { key: 'p50', title: 'p50 (same load)' },
  { key: 'p99', title: 'p99 (same load)' },
  { key: 'produceMicrosPerRecord', title: 'broker CPU/rec' },
  { key: 'produceWithStorageMicrosPerRecord', title: 'CPU/rec with PG' },
  { key: 'peakMemory', title: 'peak memory' },
  { key: 'residentMemory', title: 'memory held' },
];

export const times = (r: number | undefined) => (r === undefined || !Number.isFinite(r) ? '' : `${r.toFixed(2)}x`);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

export function printCell(result: ConfigurationResult): string {
  const mockConsume = result.brokers.mock?.consume?.recordsPerSecond;
  const mockP99 = result.brokers.mock?.latency?.p99;
  const versus = result.versusKafka ?? {};
  const versusRows = ENGINES.filter((e) => versus[e]).map((e) => [`${e} ÷ Kafka`, ...VERSUS_KAFKA_COLUMNS.map((col) => times(versus[e]![col.key]))]);
  const versusTable = versusRows.length > 0 ? '\n\ngateway ÷ Apache Kafka (same run; throughput above 1 is faster, latency, CPU and memory below 1 are better)\n' + table(['', ...VERSUS_KAFKA_COLUMNS.map((col) => col.title)], versusRows) : '';
  const rows = brokerRows(result).map(([row, f]) => {
    if (f.error && !f.produce) return [ROW_NAMES[row], `failed: ${f.error.slice(0, 100)}`];
    const c = ceilingsOf(row, result);
    return [
      ROW_NAMES[row] + (f.partitionsUsed ? ` (${f.partitionsUsed}p)` : ''),
      num(f.produce?.recordsPerSecond),
      num(f.produce?.megabytesPerSecond, 1),
      pct(c.null),
      pct(c.raw),
      pct(c.lower),
      pct(c.mock),
      f.consumeError ? 'failed' : num(f.consume?.recordsPerSecond),
      num(f.consume?.megabytesPerSecond, 1),
      isEngine(row) ? pct(ratio(f.consume?.recordsPerSecond, mockConsume)) : '',
      num(f.endToEnd?.recordsPerSecond),
      f.latency ? num(f.latency.offeredRate) : '',
      num(f.latency?.p50, 2),
      num(f.latency?.p99, 2),
      num(f.latency?.p999, 2),
      isEngine(row) ? (f.latency && mockP99 ? `${(f.latency.p99 / mockP99).toFixed(2)}x` : '') : '',
      num(f.produce?.brokerCores, 2),
      num(f.produce?.brokerMicrosPerRecord, 2),
      num(f.peakMemoryMB) + (f.error ? `  (${f.error.slice(0, 80)})` : '') + (f.consumeError ? `  (consume: ${f.consumeError.slice(0, 80)})` : ''),
    ];
  });
  return (
    `\n${result.label}\n` +
    table(
      ['', 'produce rec/s', 'MB/s', '/null', '/raw pg', '/lower', '/mock', 'consume rec/s', 'MB/s', '/mock', 'e2e max', 'lat load', 'p50 ms', 'p99 ms', 'p99.9 ms', 'p99/mock', 'cores', 'µs/rec', 'peak MB'],
      rows,
    ) +
    versusTable
  );
}

export interface Target {
  target: string;
  configuration: string;
  figure: string;
  pass: boolean;
}

export function evaluateTargets(results: ConfigurationResult[]): Target[] {
  const targets: Target[] = [];
  for (const r of results) {
    const produce = (row: Row) => r.brokers[row]?.produce?.recordsPerSecond;
    if (r.client === 'rdkafka' && r.recordBytes === 100) {
      const toNull = ratio(produce('memory'), produce('null'));
      if (toNull !== undefined) targets.push({ target: 'memory engine ≥ 85% of the null broker (librdkafka, 100 B)', configuration: r.label, figure: pct(toNull), pass: toNull >= 0.85 });
      const toMock = ratio(produce('memory'), produce('mock'));
      const mockPartitions = r.brokers.mock?.partitionsUsed;
      if (toMock !== undefined) {
        targets.push({
          target: 'memory engine ahead of the librdkafka mock broker (librdkafka, 100 B)',
          configuration: r.label,
          figure: pct(toMock) + (mockPartitions ? ` (mock wrote ${mockPartitions}p)` : ''),
          pass: toMock > 1,
        });
      }
    }
    const toRaw = ratio(produce('postgres'), produce('rawPostgres'));
    const toLower = lowerCeilingRatio(r);
    if (toRaw !== undefined) {
      targets.push({
        target: 'postgres engine ≥ 50% of raw PostgreSQL',
        configuration: r.label,
        figure: pct(toRaw) + (toLower !== undefined && toLower !== toRaw ? ` (${pct(toLower)} of the lower ceiling)` : ''),
        pass: toRaw >= 0.5,
      });
    }
    const p99 = r.brokers.memory?.latency?.p99;
    if (p99 !== undefined && Number.isFinite(p99)) {
      targets.push({ target: 'memory engine p99 end-to-end < 20 ms at the shared latency load', configuration: r.label, figure: `${p99.toFixed(2)} ms`, pass: p99 < 20 });
    }
    targets.push(...kafkaTargets(r));
  }
  return targets;
}

/**
 * Against Apache Kafka on the same machine in the same run (issue 31's
 * goals): the memory engine at least level with Kafka on throughput, p99 at
 * the same load and CPU per record; the PostgreSQL engine, alone and with a
 * synchronous standby, at least 0.7x Kafka's produce and consume, no more CPU
 * per record than Kafka's broker process, and p99 end-to-end under 50 ms at
 * 64 partitions at the shared load.
 */
function kafkaTargets(r: ConfigurationResult): Target[] {
  const versus = r.versusKafka;
  if (!versus) return [];
  const targets: Target[] = [];
  const check = (target: string, value: number | undefined, pass: (v: number) => boolean) => {
    if (value !== undefined && Number.isFinite(value)) targets.push({ target, configuration: r.label, figure: times(value), pass: pass(value) });
  };
  check('memory engine produce ≥ Apache Kafka\'s', versus.memory?.produce, (v) => v >= 1);
  check('memory engine consume ≥ Apache Kafka\'s', versus.memory?.consume, (v) => v >= 1);
  check('memory engine end-to-end maximum ≥ Apache Kafka\'s', versus.memory?.endToEnd, (v) => v >= 1);
  check('memory engine p99 ≤ Apache Kafka\'s at the same load', versus.memory?.p99, (v) => v <= 1);
  for (const engine of ENGINES) check(`${ENGINE_NAMES[engine]} CPU per record produced ≤ Apache Kafka's broker process's`, versus[engine]?.produceMicrosPerRecord, (v) => v <= 1);
  for (const engine of DURABLE) {
    const name = ENGINE_NAMES[engine];
    check(`${name} produce ≥ 0.7x Apache Kafka's`, versus[engine]?.produce, (v) => v >= 0.7);
    check(`${name} consume ≥ 0.7x Apache Kafka's`, versus[engine]?.consume, (v) => v >= 0.7);
    const p99 = r.brokers[engine]?.latency?.p99;
    if (r.partitions === 64 && p99 !== undefined && Number.isFinite(p99)) {
      targets.push({ target: `${name} p99 end-to-end < ${DURABLE_P99_MS} ms at 64 partitions at the shared load`, configuration: r.label, figure: `${p99.toFixed(1)} ms`, pass: p99 < DURABLE_P99_MS });
    }
  }
  return targets;
}

export function printTargets(targets: Target[]): string {
  if (targets.length === 0) return 'targets: no figures to judge (a broker was left out or failed)';
  return (
    'targets\n' +
    table(
      ['', 'configuration', 'figure', 'target'],
      targets.map((t) => [t.pass ? 'PASS' : 'SHORT', t.configuration, t.figure, t.target]),
    )
  );
}
