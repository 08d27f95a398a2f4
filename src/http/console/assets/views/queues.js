import { api } from '../api.js';
import { h, link, section, table } from '../dom.js';
import { count, duration, time } from '../format.js';

export async function listQueues() {
  const queues = await api('/queues');
  return h(
    'div',
    {},
    h('h1', {}, 'Queen queues'),
    h('p', { class: 'muted' }, 'The same queues as the topics, as Queen’s HTTP API works them: pending is what queue-mode consumers have still to pop.'),
    section('Queues', table(
      [
        { title: 'queue', cell: (q) => link(q.name, 'topics', q.name) },
        { title: 'namespace', cell: (q) => q.namespace ?? '–' },
        { title: 'task', cell: (q) => q.task ?? '–' },
        { title: 'partitions', cell: (q) => q.partitions.join(', ') },
        { title: 'messages', cell: (q) => count(q.total), numeric: true },
        { title: 'pending', cell: (q) => count(q.pending), numeric: true },
        { title: 'lease', cell: (q) => duration(q.leaseMs) },
        { title: 'retry limit', cell: (q) => q.retryLimit, numeric: true },
        { title: 'dedup window', cell: (q) => (q.dedupWindowSeconds === 0 ? 'off' : `${q.dedupWindowSeconds} s`) },
        { title: 'dead letters', cell: (q) => (q.deadLetters === 0 ? '0' : link(count(q.deadLetters), 'queues', q.name, 'dead-letters')), numeric: true },
      ],
      queues,
      'No queues yet.',
    )),
  );
}

export async function showDeadLetters({ args: [name] }) {
  const letters = await api(`/queues/${encodeURIComponent(name)}/dead-letters`);
  return h(
    'div',
    {},
    h('h1', {}, 'Dead letters of ', link(name, 'topics', name)),
    section('Dead letters', table(
      [
        { title: 'failed', cell: (l) => time(Date.parse(l.failedAt)) },
        { title: 'partition', cell: (l) => l.partition },
        { title: 'offset', cell: (l) => count(l.offset), numeric: true },
        { title: 'group', cell: (l) => l.consumerGroup },
        { title: 'retries', cell: (l) => l.retryCount, numeric: true },
        { title: 'error', cell: (l) => l.errorMessage },
        { title: 'payload', cell: (l) => h('pre', {}, JSON.stringify(l.data, null, 2)) },
      ],
      letters,
      'No dead letters.',
    )),
  );
}
