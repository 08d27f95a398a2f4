/**
 * The results as an SVG, drawn by hand (no charting dependency): one row per
 * configuration, three panels (produce records/s, consume records/s, p99
 * end-to-end latency), one bar per broker, each labelled with its figure.
 * All panels are logarithmic (the throughput ones share one scale), so
 * kafkajs and librdkafka rows, and 8 ms and 3 s latencies, stay readable side
 * by side. Each engine's bar also says its figure over Apache Kafka's
 * (`0.85× K`): the headline, gateway ÷ Apache Kafka on the same machine in
 * the same run. `npx tsx test/bench/e2e/draw.ts [FILE]` redraws a results file.
 */
import type { BenchResults, BrokerFigures, BrokerName, VersusKafka } from './run.js';

type Row = BrokerName | 'rawPostgres';
const SERIES: { row: Row; name: string; colour: string }[] = [
  { row: 'null', name: 'null broker (client ceiling)', colour: '#9e9e9e' },
  { row: 'rawPostgres', name: 'raw PostgreSQL (storage ceiling)', colour: '#c5b358' },
  { row: 'mock', name: 'librdkafka mock (peer 2)', colour: '#5b8def' },
  { row: 'kafka', name: 'Apache Kafka (peer)', colour: '#222222' },
  { row: 'memory', name: 'queen-gateway memory', colour: '#e0703a' },
  { row: 'postgres', name: 'queen-gateway postgres', colour: '#3a9e6b' },
  { row: 'standby', name: 'postgres + sync standby', colour: '#2b6cb0' },
];

interface Panel {
  title: string;
  value: (f: BrokerFigures) => number | undefined;
  /** The gateway ÷ Kafka ratio this panel's engine bars carry. */
  versus: keyof VersusKafka;
  unit: (n: number) => string;
  /** Log scale from this value up (throughput panels share theirs); absent: linear. */
  logFloor?: number;
  shared?: boolean;
}

const compact = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0));
const PANELS: Panel[] = [
  { title: 'produce, records/s', value: (f) => f.produce?.recordsPerSecond, versus: 'produce', unit: compact, logFloor: 100, shared: true },
  { title: 'consume, records/s', value: (f) => f.consume?.recordsPerSecond, versus: 'consume', unit: compact, logFloor: 100, shared: true },
  { title: 'p99 end-to-end at the shared load, ms', value: (f) => f.latency?.p99, versus: 'p99', unit: (n) => n.toFixed(1), logFloor: 1 },
];

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderChart(results: BenchResults): string {
  const bar = 9;
  const labelWidth = 130;
  const panelWidth = 300;
  const gap = 30;
  const top = 70;
  const rowsPer = SERIES.length;
  const groupHeight = rowsPer * bar + 14;
  const height = top + results.configurations.length * groupHeight + 60;
  const width = labelWidth + PANELS.length * (panelWidth + gap);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="10">`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(`<text x="10" y="18" font-size="14" font-weight="bold">queen-gateway ÷ Apache Kafka on the same machine, same run: ${escape(results.startedAt.slice(0, 16).replace('T', ' '))} UTC${results.quick ? ' (quick)' : ''}</text>`);
  out.push(`<text x="10" y="34" fill="#555">${results.machine.cpus} cores, load average ${results.machine.loadAverageAtStart.map((l) => l.toFixed(1)).join(' ')} at start; engine bars say "×K": their figure ÷ Apache Kafka's; compare within a row: only ratios from one run mean much</text>`);
  SERIES.forEach((s, i) => {
    const x = 10 + i * 160;
    out.push(`<rect x="${x}" y="44" width="10" height="10" fill="${s.colour}"/><text x="${x + 14}" y="53">${escape(s.name)}</text>`);
  });

  const maxThroughput = Math.max(
    1,
    ...results.configurations.flatMap((c) => SERIES.flatMap((s) => [PANELS[0]!.value(c.brokers[s.row] ?? {}) ?? 0, PANELS[1]!.value(c.brokers[s.row] ?? {}) ?? 0])),
  );
  PANELS.forEach((panel, p) => {
    const x0 = labelWidth + p * (panelWidth + gap);
    const values = results.configurations.flatMap((c) => SERIES.map((s) => panel.value(c.brokers[s.row] ?? {}) ?? 0));
    const max = panel.shared ? maxThroughput : Math.max(2, ...values.filter(Number.isFinite));
    const floor = panel.logFloor;
    const scale = (v: number) =>
      floor !== undefined
        ? Math.max(0, (Math.log10(Math.max(v, floor)) - Math.log10(floor)) / (Math.log10(max) - Math.log10(floor))) * (panelWidth - 80)
        : (v / max) * (panelWidth - 80);
    out.push(`<text x="${x0}" y="${top - 4}" font-weight="bold">${escape(panel.title)}${floor !== undefined ? ' (log scale)' : ''}</text>`);
    out.push(`<line x1="${x0}" y1="${top}" x2="${x0}" y2="${height - 50}" stroke="#333"/>`);
    results.configurations.forEach((c, i) => {
      const y0 = top + i * groupHeight + 4;
      SERIES.forEach((s, k) => {
        const v = panel.value(c.brokers[s.row] ?? {});
        if (v === undefined || !Number.isFinite(v)) return;
        const y = y0 + k * bar;
        const w = Math.max(1, scale(v));
        out.push(`<rect x="${x0}" y="${y}" width="${w.toFixed(1)}" height="${bar - 1}" fill="${s.colour}"/>`);
        const versus = s.row === 'memory' || s.row === 'postgres' || s.row === 'standby' ? c.versusKafka?.[s.row]?.[panel.versus] : undefined;
        const label = panel.unit(v) + (versus !== undefined && Number.isFinite(versus) ? ` · ${versus.toFixed(2)}×K` : '');
        out.push(`<text x="${(x0 + w + 3).toFixed(1)}" y="${y + bar - 2}" font-size="8">${escape(label)}</text>`);
      });
    });
  });
  results.configurations.forEach((c, i) => {
    const y = top + i * groupHeight + 4 + (rowsPer * bar) / 2 + 3;
    out.push(`<text x="10" y="${y}" font-weight="bold">${escape(c.label)}</text>`);
  });
  const footer = results.targets.map((t) => `${t.pass ? 'PASS' : 'SHORT'} ${t.configuration}: ${t.figure}`).join(' · ');
  out.push(`<text x="10" y="${height - 30}" fill="#333">targets: ${escape(footer.slice(0, 260))}</text>`);
  out.push(`<text x="10" y="${height - 14}" fill="#777">npm run bench · bench-results/latest.json · raw figures and settings in docs/bench/README.md</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
