/**
 * Prints a results file (default bench-results/latest.json) as Markdown
 * tables for docs/bench/README.md: the headline (each engine ÷ Apache Kafka,
 * one row per configuration), per configuration each broker's figures with
 * their ratios, then the targets.
 * Run: npx tsx test/bench/e2e/summary.ts [FILE]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './processes.js';
import { ENGINES, lowerCeilingRatio, ratio, ROW_NAMES as NAMES, ROW_ORDER as ORDER, times, VERSUS_KAFKA_COLUMNS } from './report.js';
import type { BenchResults, BrokerFigures, BrokerName } from './run.js';

type Row = BrokerName | 'rawPostgres';

const results = JSON.parse(readFileSync(process.argv[2] ?? join(REPO_ROOT, 'bench-results/latest.json'), 'utf8')) as BenchResults;
const n = (x: number | undefined | null, digits = 0) =>
  x === undefined || x === null || !Number.isFinite(x) ? '' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pct = (r: number | undefined) => (r === undefined ? '' : `${Math.round(r * 100)}%`);

const lines: string[] = [];
lines.push(
  `Run of ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC${results.quick ? ' (--quick)' : ''}, ${results.machine.cpus} cores (${results.machine.model}), ` +
    `load average ${results.machine.loadAverageAtStart.map((l) => l.toFixed(1)).join(' ')} at start and ${results.machine.loadAverageAtEnd.map((l) => l.toFixed(1)).join(' ')} at end, Node ${results.machine.node}.`,
  ...(results.machine.loadAverageAfter?.length
    ? [`Load average as each configuration finished: ${results.machine.loadAverageAfter.map((l) => `${l.configuration} ${l.loadAverage.map((x) => x.toFixed(1)).join(' ')}`).join('; ')}.` + (results.minutes ? ` The run took ${results.minutes.toFixed(1)} minutes.` : '')]
    : []),
  '',
);
const withKafka = results.configurations.filter((c) => c.versusKafka && Object.keys(c.versusKafka).length > 0);
if (withKafka.length > 0) {
  lines.push('**gateway ÷ Apache Kafka on the same machine, same run** (throughput above 1x is faster than Kafka; latency at the same offered load, broker CPU per record and peak memory below 1x are better)', '');
  lines.push(`| configuration | engine | ${VERSUS_KAFKA_COLUMNS.map((col) => col.title).join(' | ')} | latency load rec/s |`);
  lines.push(`| --- | --- | ${VERSUS_KAFKA_COLUMNS.map(() => '---:').join(' | ')} | ---: |`);
  for (const c of withKafka) {
    for (const engine of ENGINES) {
      const v = c.versusKafka![engine];
      if (v) lines.push(`| ${c.label} | ${engine} | ${VERSUS_KAFKA_COLUMNS.map((col) => times(v[col.key])).join(' | ')} | ${n(c.brokers.kafka?.latency?.offeredRate)} |`);
    }
  }
  lines.push('');
}
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
    const product = (ENGINES as readonly string[]).includes(row);
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
  const groups = ORDER.filter((row) => c.brokers[row]?.consume?.members).map((row) => {
    const consume = c.brokers[row]!.consume!;
    return `${NAMES[row]}: all ${consume.members} members assigned after ${n((consume.allAssignedAfterMs ?? NaN) / 1000, 1) || '(not all)'} s, first record after ${n((consume.firstRecordAfterMs ?? NaN) / 1000, 1)} s`;
  });
  if (groups.length > 0) lines.push('', `A group of ${c.members} members: ${groups.join('; ')}.`);
  lines.push('');
}
lines.push('| | configuration | figure | target |', '| --- | --- | ---: | --- |');
for (const t of results.targets) lines.push(`| ${t.pass ? 'PASS' : 'SHORT'} | ${t.configuration} | ${t.figure} | ${t.target} |`);
process.stdout.write(lines.join('\n') + '\n');
