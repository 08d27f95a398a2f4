import { api } from '../api.js';
import { lineChart } from '../chart.js';
import { figures, h, section, table } from '../dom.js';
import { count, time } from '../format.js';

/** Samples kept for the chart: two minutes at one every two seconds. */
const WINDOW = 60;
const EVERY_MS = 2000;

function throughputChart(signal) {
  const box = h('div', { class: 'chart-box' });
  const rates = { in: [], out: [] };
  let last = null;
  const draw = () =>
    box.replaceChildren(
      lineChart([
        { className: 'in', points: rates.in },
        { className: 'out', points: rates.out },
      ]),
    );
  const sample = async () => {
    if (signal.aborted) return;
    try {
      const now = await api('/throughput');
      if (last && now.at > last.at) {
        const seconds = (now.at - last.at) / 1000;
        rates.in.push({ t: now.at, v: Math.max(0, now.produced - last.produced) / seconds });
        rates.out.push({ t: now.at, v: Math.max(0, now.consumed - last.consumed) / seconds });
        for (const r of Object.values(rates)) if (r.length > WINDOW) r.shift();
      }
      last = now;
      draw();
    } finally {
      if (!signal.aborted) setTimeout(sample, EVERY_MS);
    }
  };
  draw();
  sample();
  const legend = h('div', { class: 'chart-legend' }, h('span', { class: 'in' }, 'records/s in (produced)'), h('span', { class: 'out' }, 'records/s out (committed by groups)'));
  return h('div', { id: 'throughput' }, legend, box);
}

export async function showCluster({ signal }) {
  const cluster = await api('/cluster');
  return h(
    'div',
    {},
    h('h1', {}, 'Cluster'),
    figures([
      ['cluster id', cluster.clusterId ?? '(no gateway)'],
      ['gateways', count(cluster.nodes.length)],
      ['topics', count(cluster.topics)],
      ['partitions', count(cluster.partitions)],
      ['consumer groups', count(cluster.groups)],
      ['open transactions', count(cluster.openTransactions)],
    ]),
    section(
      'Gateways',
      table(
        [
          { title: 'node', cell: (n) => `${n.nodeId}${n.nodeId === cluster.self ? ' (this one)' : ''}`, numeric: true },
          { title: 'address', cell: (n) => `${n.host}:${n.port}` },
          { title: 'listeners', cell: (n) => Object.entries(n.listeners).map(([name, a]) => `${name} ${a.host}:${a.port}`).join(', ') },
          { title: 'rack', cell: (n) => n.rack ?? '–' },
          { title: 'core', cell: (n) => n.core },
          { title: 'started', cell: (n) => time(n.startedAt) },
        ],
        cluster.nodes,
        'No gateway runs beside this HTTP API: it serves the core alone.',
      ),
    ),
    section('Throughput', throughputChart(signal), h('p', { class: 'muted' }, 'Polled every 2 s: records appended to every partition, and records consumer groups committed past.')),
  );
}
