/**
 * Prints a results file (default bench-results/latest.json) as Markdown
 * tables for docs/bench/README.md: per configuration each broker's figures
 * with their ratios, then the targets.
 * Run: npx tsx test/bench/e2e/summary.ts [FILE]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './processes.js';
import { lowerCeilingRatio, ratio } from './report.js';
import type { BenchResults, BrokerFigures, BrokerName } from './run.js';

type Row = BrokerName | 'rawPostgres';
const NAMES: Record<Row, string> = { null: 'null broker', rawPostgres: 'raw pg', mock: 'mock (peer)', memory: 'memory', postgres: 'postgres' };
const ORDER: Row[] = ['null', 'rawPostgres', 'mock', 'memory', 'postgres'];

const results = JSON.parse(readFileSync(process.argv[2] ?? join(REPO_ROOT, 'bench-results/latest.json'), 'utf8')) as BenchResults;
const n = (x: number | undefined | null, digits = 0) =>
  x === undefined || x === null || !Number.isFinite(x) ? '' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pct = (r: number | undefined) => (r === undefined ? '' : `${Math.round(r * 100)}%`);

const lines: string[] = [];
lines.push(
  `Run of ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC${results.quick ? ' (--quick)' : ''}, ${results.machine.cpus} cores (${results.machine.model}), ` +
    `load average ${results.machine.loadAverageAtStart.map((l) => l.toFixed(1)).join(' ')} at start and ${results.machine.loadAverageAtEnd.map((l) => l.toFixed(1)).join(' ')} at end, Node ${results.machine.node}.`,
  '',
);
for (const c of results.configurations) {
  lines.push(`**${c.label}**`, '');
  lines.push('| | produce rec/s | MB/s | ÷ null | ÷ raw pg | ÷ lower ceiling | ÷ mock | consume rec/s | ÷ mock | end-to-end max rec/s | latency load rec/s | p50 ms | p99 ms | p99.9 ms | broker cores | µs/rec | peak MB |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const rate = (r: Row) => c.brokers[r]?.produce?.recordsPerSecond;
  for (const row of ORDER) {
    const f: BrokerFigures | undefined = c.brokers[row];
    if (!f) continue;
    const name = NAMES[row] + (f.partitionsUsed ? ` (${f.partitionsUsed}p)` : '');
    if (f.error && !f.produce) {
      lines.push(`| ${name} | failed: ${f.error.replace(/\|/g, '/').slice(0, 120)} |||||||||||||||| `);
      continue;
    }
    const product = row === 'memory' || row === 'postgres';
    lines.push(
      `| ${name} | ${n(f.produce?.recordsPerSecond)} | ${n(f.produce?.megabytesPerSecond, 1)} | ${row === 'null' ? '' : pct(ratio(rate(row), rate('null')))} | ` +
        `${row === 'postgres' ? pct(ratio(rate(row), rate('rawPostgres'))) : ''} | ${row === 'postgres' ? pct(lowerCeilingRatio(c)) : ''} | ${product ? pct(ratio(rate(row), rate('mock'))) : ''} | ` +
        `${f.consumeError ? 'failed' : n(f.consume?.recordsPerSecond)} | ${product ? pct(ratio(f.consume?.recordsPerSecond, c.brokers.mock?.consume?.recordsPerSecond)) : ''} | ` +
        `${n(f.endToEnd?.recordsPerSecond)} | ${n(f.latency?.offeredRate)} | ${n(f.latency?.p50, 1)} | ${n(f.latency?.p99, 1)} | ${n(f.latency?.p999, 1)} | ` +
        `${n(f.produce?.brokerCores, 2)} | ${n(f.produce?.brokerMicrosPerRecord, 2)} | ${n(f.peakMemoryMB)} |` +
        (f.error ? ` ${f.error.replace(/\|/g, '/').slice(0, 80)}` : '') +
        (f.consumeError ? ` consume: ${f.consumeError.replace(/\|/g, '/').slice(0, 80)}` : ''),
    );
  }
  lines.push('');
}
lines.push('| | configuration | figure | target |', '| --- | --- | ---: | --- |');
for (const t of results.targets) lines.push(`| ${t.pass ? 'PASS' : 'SHORT'} | ${t.configuration} | ${t.figure} | ${t.target} |`);
process.stdout.write(lines.join('\n') + '\n');
