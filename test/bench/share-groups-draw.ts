/**
 * Redraws the share-group benchmark's chart from its results file (default
 * bench-results/share-groups.json) next to it, the goals judged again.
 * Run: npx tsx test/bench/share-groups-draw.ts [FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './e2e/processes.js';
import { judge, renderShareChart, type ShareBenchResults } from './share-groups-report.js';

const file = process.argv[2] ?? join(REPO_ROOT, 'bench-results/share-groups.json');
const results = JSON.parse(readFileSync(file, 'utf8')) as ShareBenchResults;
results.judged = judge(results);
writeFileSync(file.replace(/\.json$/, '') + '.svg', renderShareChart(results));
