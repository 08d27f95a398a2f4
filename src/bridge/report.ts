import { Counter, Gauge, Registry } from 'prom-client';
import { serveOperations, type OperationsEndpoint } from '../metrics/endpoint.js';
import { exposition } from '../metrics/process.js';
import type { BridgeProgress } from './bridge.js';

/**
 * What the bridge shows while it runs and when it stops: a progress line
 * (records copied, rate, lag per topic, groups), a final report, and the same
 * figures as Prometheus metrics on a loopback HTTP port, with the process's
 * own series (../metrics).
 */

const number = (n: number) => Math.round(n).toLocaleString('en-US');

/** Records a second between two looks at the progress; the whole run's average when there is no earlier look. */
export function rate(now: BridgeProgress, at: number, earlier: { copied: number; at: number } | null): number {
  const since = earlier ?? { copied: 0, at: now.startedAt };
  const seconds = Math.max(0.001, (at - since.at) / 1000);
  return (now.copied - since.copied) / seconds;
}

export function progressLine(p: BridgeProgress, perSecond: number): string {
  const lag = p.topics.map((t) => `${t.topic} ${number(t.lag)}`).join(', ') || 'no topic yet';
  const moved = p.groups.filter((g) => g.moved).length;
  const groups = p.groups.length === 0 ? '' : `; groups: ${p.groups.length - moved} copied, ${moved} moved`;
  return `bridge: ${number(p.copied)} records copied (${number(perSecond)}/s); lag: ${lag}${groups}`;
}

export function finalReport(p: BridgeProgress, stoppedAt: number): string {
  const seconds = (stoppedAt - p.startedAt) / 1000;
  const lines = [
    `bridge stopped after ${seconds.toFixed(1)} s: ${number(p.copied)} records copied (${number(p.copied / Math.max(seconds, 0.001))}/s on average).`,
    ...p.topics.map((t) => `  topic ${t.topic}: ${number(t.copied)} copied this run, ${number(t.lag)} behind the source`),
    ...p.groups.map((g) => `  group ${g.group}: ${number(g.commits)} offsets copied${g.moved ? `; moved to the target (${g.moved})` : ''}`),
    'A restart resumes where the target ends; nothing is copied twice.',
  ];
  return lines.join('\n');
}

/** The bridge's figures as they are now, beside the process's series (Node, the RPC to the core). */
export async function renderMetrics(p: BridgeProgress): Promise<string> {
  const registry = new Registry();
  const registers = [registry];
  const copied = new Counter({ name: 'queen_bridge_records_copied_total', help: 'Records the bridge appended to the target in this run, by topic.', labelNames: ['topic'], registers });
  const lag = new Gauge({ name: 'queen_bridge_lag_records', help: "Records in the source not yet on the target, by topic (as of librdkafka's last look at the source's end).", labelNames: ['topic'], registers });
  const commits = new Counter({ name: 'queen_bridge_group_offsets_copied_total', help: 'Committed offsets the bridge copied to the target, by group.', labelNames: ['group'], registers });
  const moved = new Gauge({ name: 'queen_bridge_group_moved', help: '1 for a group that has moved to the target (its offsets are no longer copied), else 0.', labelNames: ['group'], registers });
  for (const t of p.topics) {
    copied.inc({ topic: t.topic }, t.copied);
    lag.set({ topic: t.topic }, t.lag);
  }
  for (const g of p.groups) {
    commits.inc({ group: g.group }, g.commits);
    moved.set({ group: g.group }, g.moved ? 1 : 0);
  }
  return exposition(registry);
}

/** GET /metrics, /health and /ready on 127.0.0.1:port (0 picks a free one); ready while the bridge copies. */
export function serveMetrics(port: number, progress: () => BridgeProgress, copying: () => boolean): Promise<OperationsEndpoint> {
  return serveOperations({
    host: '127.0.0.1',
    port,
    metrics: () => renderMetrics(progress()),
    ready: () => (copying() ? null : 'The bridge is stopping.'),
  });
}
