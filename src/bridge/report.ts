import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Family } from '../metrics/registry.js';
import type { BridgeProgress } from './bridge.js';

/**
 * What the bridge shows while it runs and when it stops: a progress line
 * (records copied, rate, lag per topic, groups), a final report, and the same
 * figures as Prometheus metrics on a loopback HTTP port.
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

export function renderMetrics(p: BridgeProgress): string {
  const copied = new Family('queen_bridge_records_copied_total', 'counter', 'Records the bridge appended to the target in this run, by topic.');
  const lag = new Family('queen_bridge_lag_records', 'gauge', "Records in the source not yet on the target, by topic (as of librdkafka's last look at the source's end).");
  const commits = new Family('queen_bridge_group_offsets_copied_total', 'counter', 'Committed offsets the bridge copied to the target, by group.');
  const moved = new Family('queen_bridge_group_moved', 'gauge', '1 for a group that has moved to the target (its offsets are no longer copied), else 0.');
  for (const t of p.topics) {
    copied.add({ topic: t.topic }, t.copied);
    lag.add({ topic: t.topic }, t.lag);
  }
  for (const g of p.groups) {
    commits.add({ group: g.group }, g.commits);
    moved.add({ group: g.group }, g.moved ? 1 : 0);
  }
  const lines: string[] = [];
  for (const family of [copied, lag, commits, moved]) family.render(lines);
  return lines.join('\n') + '\n';
}

/** GET /metrics on 127.0.0.1:port; resolves with the port bound (0 picks a free one). */
export async function serveMetrics(port: number, progress: () => BridgeProgress): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(renderMetrics(progress()));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('The bridge serves GET /metrics only.\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { port: (server.address() as AddressInfo).port, server };
}
