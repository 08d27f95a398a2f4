import { api } from '../api.js';
import { confirmAction, failure, figures, h, link, section, table } from '../dom.js';
import { count } from '../format.js';

export async function listGroups() {
  const groups = await api('/groups');
  return h(
    'div',
    {},
    h('h1', {}, 'Consumer groups'),
    section('All groups', table(
      [
        { title: 'group', cell: (g) => link(g.group, 'groups', g.group) },
        { title: 'type', cell: (g) => g.type },
        { title: 'protocol type', cell: (g) => g.protocolType || '–' },
        { title: 'state', cell: (g) => g.state },
        { title: 'members', cell: (g) => count(g.members), numeric: true },
        { title: 'topics', cell: (g) => g.topics.join(', ') || '–' },
        { title: 'lag', cell: (g) => count(g.lag), numeric: true },
      ],
      groups,
      'No consumer groups yet.',
    )),
  );
}

function resetForm(group, topics, refresh) {
  const outcome = h('div', { class: 'outcome', id: 'reset-outcome' });
  const form = h(
    'form',
    { class: 'inline-form', id: 'reset-offsets' },
    h('label', {}, 'Topic ', h('select', { name: 'topic' }, topics.map((t) => h('option', { value: t }, t)))),
    h('label', {}, 'To ', h('select', { name: 'to' }, ['earliest', 'latest', 'offset'].map((t) => h('option', { value: t }, t)))),
    h('label', {}, 'Offset ', h('input', { name: 'offset', type: 'number', min: 0, placeholder: 'for "offset"' })),
    h('button', { class: 'danger' }, 'Reset offsets'),
    outcome,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { topic: data.get('topic'), to: data.get('to') };
    if (body.to === 'offset') body.offset = Number(data.get('offset'));
    const where = body.to === 'offset' ? `offset ${body.offset}` : body.to;
    if (!(await confirmAction('Reset offsets', `Move group "${group.group}" on topic "${body.topic}" to ${where} in every partition?`, 'Reset'))) return;
    try {
      await api(`/groups/${encodeURIComponent(group.group)}/reset`, { method: 'POST', body });
      await refresh();
    } catch (e) {
      outcome.replaceChildren(failure(e));
    }
  });
  return form;
}

export async function showGroup({ args: [name], refresh }) {
  const [group, allTopics] = await Promise.all([api(`/groups/${encodeURIComponent(name)}`), api('/topics')]);
  const ownTopics = [...new Set(group.partitions.map((p) => p.topic))];
  const topics = [...ownTopics, ...allTopics.map((t) => t.name).filter((t) => !ownTopics.includes(t))];
  return h(
    'div',
    {},
    h('h1', {}, 'Consumer group ', h('span', { class: 'name' }, group.group)),
    figures([
      ['state', group.state],
      ['type', group.type],
      ['protocol', group.protocol || '–'],
      ['generation', group.generationId],
      ['members', count(group.members.length)],
      ['lag', count(group.partitions.reduce((n, p) => n + (p.lag ?? 0), 0))],
    ]),
    section(
      'Members',
      table(
        [
          { title: 'member id', cell: (m) => m.memberId },
          { title: 'instance id', cell: (m) => m.groupInstanceId ?? '–' },
          { title: 'client id', cell: (m) => m.clientId },
          { title: 'host', cell: (m) => m.clientHost },
          { title: 'assigned', cell: (m) => m.assignment.map((a) => `${a.topic} [${a.partitions.join(', ')}]`).join('; ') || '–' },
        ],
        group.members,
        'No members: the group is inactive, so its offsets may be reset.',
      ),
    ),
    section(
      'Offsets and lag',
      table(
        [
          { title: 'topic', cell: (p) => link(p.topic, 'topics', p.topic) },
          { title: 'partition', cell: (p) => p.partition, numeric: true },
          { title: 'committed', cell: (p) => count(p.committed), numeric: true },
          { title: 'log end', cell: (p) => count(p.logEndOffset), numeric: true },
          { title: 'lag', cell: (p) => count(p.lag), numeric: true },
          { title: 'member', cell: (p) => p.member ?? '–' },
        ],
        group.partitions,
        'The group has committed no offsets.',
      ),
    ),
    section('Reset offsets', h('p', { class: 'muted' }, 'Refused while the group has members, as Kafka does: stop its consumers first.'), resetForm(group, topics, refresh)),
  );
}
