import { api } from '../api.js';
import { h, section, table } from '../dom.js';
import { count, duration, time } from '../format.js';

/** Ongoing, or between the producer's EndTxn and its markers. */
const isOpen = (t) => t.state === 'Ongoing' || t.state.startsWith('Prepare');

export async function listTransactions() {
  const transactions = await api('/transactions');
  return h(
    'div',
    {},
    h('h1', {}, 'Transactions'),
    section('Transactional ids', table(
      [
        { title: 'transactional id', cell: (t) => t.transactionalId },
        { title: 'state', cell: (t) => t.state },
        { title: 'producer id', cell: (t) => count(t.producerId), numeric: true },
        { title: 'epoch', cell: (t) => t.producerEpoch, numeric: true },
        { title: 'timeout', cell: (t) => duration(t.timeoutMs) },
        { title: 'open since', cell: (t) => (!isOpen(t) || t.startedAt < 0 ? '–' : `${time(t.startedAt)} (${duration(Date.now() - t.startedAt)})`) },
        { title: 'partitions', cell: (t) => t.partitions.map((p) => `${p.topic}-${p.partition}`).join(', ') || '–' },
      ],
      transactions,
      'No transactional producers yet.',
    )),
  );
}
