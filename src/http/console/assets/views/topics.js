import { api } from '../api.js';
import { confirmAction, failure, figures, h, link, section, table } from '../dom.js';
import { bytes, count, time } from '../format.js';

/** "key=value" lines as the configs object the create route takes. */
function parseConfigs(text) {
  const configs = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`"${line}" is not a config: write one name=value a line, e.g. retention.ms=86400000.`);
    configs[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return configs;
}

function createForm() {
  const outcome = h('div', { class: 'outcome' });
  const form = h(
    'form',
    { class: 'inline-form', id: 'create-topic' },
    h('label', {}, 'Name ', h('input', { name: 'name', required: true, pattern: '[A-Za-z0-9._\\-]+', maxlength: 249 })),
    h('label', {}, 'Partitions ', h('input', { name: 'partitions', type: 'number', min: 1, value: 1, required: true })),
    h('label', { class: 'wide' }, 'Configs (name=value a line) ', h('textarea', { name: 'configs', rows: 2, placeholder: 'cleanup.policy=compact' })),
    h('button', { class: 'primary' }, 'Create topic'),
    outcome,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      const body = { name: data.get('name'), partitions: Number(data.get('partitions')), configs: parseConfigs(String(data.get('configs'))) };
      if (!(await confirmAction('Create topic', `Create topic "${body.name}" with ${body.partitions} partition(s)?`, 'Create'))) return;
      await api('/topics', { method: 'POST', body });
      location.hash = `#/topics/${encodeURIComponent(body.name)}`;
    } catch (e) {
      outcome.replaceChildren(failure(e));
    }
  });
  return form;
}

export async function listTopics() {
  const topics = await api('/topics');
  return h(
    'div',
    {},
    h('h1', {}, 'Topics'),
    section('All topics', table(
      [
        { title: 'topic', cell: (t) => link(t.name, 'topics', t.name) },
        { title: 'partitions', cell: (t) => count(t.partitions), numeric: true },
        { title: 'records', cell: (t) => count(t.records), numeric: true },
        { title: 'cleanup', cell: (t) => (t.compacted ? 'compact' : 'delete') },
        { title: 'created by', cell: (t) => (t.kafkaCreated ? 'Kafka' : 'Queen') },
        { title: 'created', cell: (t) => time(t.createdAt) },
      ],
      topics,
      'No topics yet: create one below, or produce to one.',
    )),
    section('Create a topic', createForm()),
  );
}

async function deleteTopic(name, outcome) {
  if (!(await confirmAction('Delete topic', `Delete topic "${name}" with all its records and committed offsets? This cannot be undone.`, 'Delete'))) return;
  try {
    await api(`/topics/${encodeURIComponent(name)}`, { method: 'DELETE' });
    location.hash = '#/topics';
  } catch (e) {
    outcome.replaceChildren(failure(e));
  }
}

export async function showTopic({ args: [name] }) {
  const topic = await api(`/topics/${encodeURIComponent(name)}`);
  const records = topic.partitions.reduce((n, p) => n + p.highWatermark - p.logStartOffset, 0);
  const size = topic.partitions.reduce((n, p) => n + p.bytes, 0);
  const outcome = h('div', { class: 'outcome' });
  return h(
    'div',
    {},
    h('h1', {}, 'Topic ', h('span', { class: 'name' }, topic.name)),
    figures([
      ['partitions', count(topic.partitions.length)],
      ['records', count(records)],
      ['size', bytes(size, topic.partitions.every((p) => p.bytesExact))],
      ['topic id', topic.id],
    ]),
    section(
      'Partitions',
      table(
        [
          { title: 'partition', cell: (p) => p.index, numeric: true },
          { title: 'name', cell: (p) => p.name },
          { title: 'log start', cell: (p) => count(p.logStartOffset), numeric: true },
          { title: 'high watermark', cell: (p) => count(p.highWatermark), numeric: true },
          { title: 'last stable', cell: (p) => count(p.lastStableOffset), numeric: true },
          { title: 'records', cell: (p) => count(p.highWatermark - p.logStartOffset), numeric: true },
          { title: 'size', cell: (p) => bytes(p.bytes, p.bytesExact), numeric: true },
          { title: '', cell: (p) => h('a', { href: `#/topics/${encodeURIComponent(topic.name)}/messages?partition=${p.index}` }, 'browse') },
        ],
        topic.partitions,
      ),
    ),
    section(
      'Configs',
      topic.configs === null
        ? h('p', { class: 'muted' }, 'Not shown: this principal may not DESCRIBE_CONFIGS on the topic.')
        : table(
            [
              { title: 'config', cell: (c) => c.name },
              { title: 'value', cell: (c) => c.value ?? 'null' },
              { title: 'source', cell: (c) => (c.readOnly ? 'read-only' : c.isDefault ? 'default' : 'set on the topic') },
            ],
            [...topic.configs].sort((a, b) => Number(a.isDefault) - Number(b.isDefault) || (a.name < b.name ? -1 : 1)),
          ),
    ),
    section('Danger zone', h('button', { class: 'danger', id: 'delete-topic', onclick: () => deleteTopic(topic.name, outcome) }, 'Delete topic'), outcome),
  );
}
