/**
 * Redraws the chart of a results file (default bench-results/latest.json)
 * next to it, and, for the default file, as docs/bench/results.svg.
 * Run: npx tsx test/bench/e2e/draw.ts [FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderChart } from './chart.js';
import { REPO_ROOT } from './processes.js';
import type { BenchResults } from './run.js';

const file = process.argv[2] ?? join(REPO_ROOT, 'bench-results/latest.json');
const svg = renderChart(JSON.parse(readFileSync(file, 'utf8')) as BenchResults);
writeFileSync(file.replace(/\.json$/, '') + '.svg', svg);
if (process.argv[2] === undefined) writeFileSync(join(REPO_ROOT, 'docs/bench/results.svg'), svg);
