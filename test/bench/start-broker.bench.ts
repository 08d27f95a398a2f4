// How long `startBroker()` takes until clients can connect, and `stop()`.
// The first start in a process pays for loading and warming the modules;
// later starts do not. Run: npm run bench:start
import { performance } from 'node:perf_hooks';
import { startBroker } from '../../src/index.js';

const RUNS = 50;

function ms(n: number): string {
  return `${n.toFixed(2)} ms`;
}

const coldStart = performance.now();
const first = await startBroker();
const cold = performance.now() - coldStart;
await first.stop();

const starts: number[] = [];
const stops: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const broker = await startBroker();
  const t1 = performance.now();
  await broker.stop();
  starts.push(t1 - t0);
  stops.push(performance.now() - t1);
}
starts.sort((a, b) => a - b);
stops.sort((a, b) => a - b);
const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
console.log(`startBroker, first in process:                   ${ms(cold)}`);
console.log(`startBroker, median of ${RUNS} warm starts:        ${ms(median(starts))} (p90 ${ms(starts[Math.floor(RUNS * 0.9)]!)})`);
console.log(`stop, median:                                    ${ms(median(stops))}`);
console.log(`first start / warm start:                        ${(cold / median(starts)).toFixed(1)}x`);
