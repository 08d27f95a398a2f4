import { api } from '../api.js';
import { h, link, table } from '../dom.js';
import { count, recordBytes, time } from '../format.js';

const FORMATS = ['text', 'json', 'hex'];

function controls(topic, params) {
  const partitions = Array.from({ length: topic.partitions }, (_, i) => i);
  const from = params.has('timestamp') ? 'timestamp' : 'offset';
  const option = (value, selected, text = value) => h('option', { value, selected: String(value) === String(selected) }, text);
  const form = h(
    'form',
    { class: 'inline-form', id: 'browse' },
    h('label', {}, 'Partition ', h('select', { name: 'partition' }, partitions.map((p) => option(p, params.get('partition') ?? 0)))),
    h('label', {}, 'From ', h('select', { name: 'from' }, option('offset', from), option('timestamp', from, 'time (ISO or ms)'))),
    h('input', { name: 'at', value: params.get(from) === null ? '' : from === 'timestamp' ? new Date(Number(params.get('timestamp'))).toISOString() : params.get('offset'), placeholder: 'earliest' }),
    h('label', {}, 'Show as ', h('select', { name: 'format' }, FORMATS.map((f) => option(f, params.get('format') ?? 'text')))),
    h('button', { class: 'primary' }, 'Read'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = new URLSearchParams({ partition: data.get('partition'), format: data.get('format') });
    const at = String(data.get('at')).trim();
    if (at !== '') next.set(data.get('from'), data.get('from') === 'timestamp' ? String(/^\d+$/.test(at) ? Number(at) : Date.parse(at)) : at);
    location.hash = `#/topics/${encodeURIComponent(topic.name)}/messages?${next}`;
  });
  return form;
}

const pre = (text, className) => h('pre', { class: className }, text);

export async function browseMessages({ args: [name], params }) {
  const topic = (await api('/topics')).find((t) => t.name === name);
  if (!topic) throw new Error(`Topic "${name}" does not exist (it may have been deleted); pick one from the topic list.`);
  const partition = Number(params.get('partition') ?? 0);
  const format = params.get('format') ?? 'text';
  const query = new URLSearchParams({ limit: '50' });
  for (const key of ['offset', 'timestamp']) if (params.has(key)) query.set(key, params.get(key));
  const page = await api(`/topics/${encodeURIComponent(name)}/partitions/${partition}/messages?${query}`);
  const more = new URLSearchParams({ partition, format, offset: page.next });
  return h(
    'div',
    {},
    h('h1', {}, 'Messages of ', link(name, 'topics', name), ` partition ${partition}`),
    controls(topic, params),
    h('p', { class: 'muted' }, `Log start ${count(page.logStartOffset)}, high watermark ${count(page.highWatermark)}, last stable ${count(page.lastStableOffset)}; showing from offset ${count(page.from)}.`),
    table(
      [
        { title: 'offset', cell: (r) => count(r.offset), numeric: true },
        { title: 'time', cell: (r) => time(r.timestamp) },
        { title: 'key', cell: (r) => pre(recordBytes(r.key, format), 'record-key') },
        { title: 'headers', cell: (r) => r.headers.map((hd) => h('div', { class: 'record-header' }, h('b', {}, hd.key), ': ', recordBytes(hd.value, format))) },
        { title: 'value', cell: (r) => pre(recordBytes(r.value, format), 'record-value') },
      ],
      page.records,
      'No records from here on.',
    ),
    page.records.length > 0 ? h('p', {}, h('a', { href: `#/topics/${encodeURIComponent(name)}/messages?${more}`, id: 'next-page' }, 'Next records →')) : null,
  );
}
