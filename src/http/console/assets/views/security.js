import { api } from '../api.js';
import { failure, h, section, table } from '../dom.js';

/** Each block on its own: a principal may see ACLs but not quotas, or the other way round. */
const attempt = (promise) => promise.catch((e) => ({ failed: e }));

export async function showSecurity() {
  const [acls, quotas] = await Promise.all([attempt(api('/acls')), attempt(api('/quotas'))]);
  return h(
    'div',
    {},
    h('h1', {}, 'ACLs & quotas'),
    section(
      'ACLs',
      acls.failed
        ? failure(acls.failed)
        : table(
            [
              { title: 'principal', cell: (b) => b.principal },
              { title: 'host', cell: (b) => b.host },
              { title: 'permission', cell: (b) => b.permission },
              { title: 'operation', cell: (b) => b.operation },
              { title: 'resource', cell: (b) => `${b.resourceType} ${b.resourceName}` },
              { title: 'pattern', cell: (b) => b.patternType },
            ],
            acls,
            'No ACLs are stored.',
          ),
    ),
    section(
      'Client quotas',
      quotas.failed
        ? failure(quotas.failed)
        : table(
            [
              { title: 'user', cell: (q) => q.user ?? '–' },
              { title: 'client id', cell: (q) => q.clientId ?? '–' },
              { title: 'quotas', cell: (q) => Object.entries(q.values).map(([k, v]) => `${k}=${v}`).join(', ') },
            ],
            quotas,
            'No client quotas are set.',
          ),
    ),
  );
}
