// The console's router: a hash route per view; each view is a function that
// fetches what it shows and answers a node. Leaving a view aborts its signal
// (the throughput chart stops polling).
import { signedIn, signOut } from './api.js';
import { failure, h } from './dom.js';
import { showCluster } from './views/cluster.js';
import { listGroups, showGroup } from './views/groups.js';
import { browseMessages } from './views/messages.js';
import { listQueues, showDeadLetters } from './views/queues.js';
import { showSecurity } from './views/security.js';
import { listTopics, showTopic } from './views/topics.js';
import { listTransactions } from './views/transactions.js';

const ROUTES = [
  [/^$/, showCluster],
  [/^topics$/, listTopics],
  [/^topics\/([^/]+)$/, showTopic],
  [/^topics\/([^/]+)\/messages$/, browseMessages],
  [/^groups$/, listGroups],
  [/^groups\/([^/]+)$/, showGroup],
  [/^transactions$/, listTransactions],
  [/^security$/, showSecurity],
  [/^queues$/, listQueues],
  [/^queues\/([^/]+)\/dead-letters$/, showDeadLetters],
];

let current = null;

async function route() {
  current?.abort();
  const leaving = (current = new AbortController());
  const view = document.getElementById('view');
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.getAttribute('href').slice(2).split('/')[0] === path.split('/')[0]);
  const found = ROUTES.find(([pattern]) => pattern.test(path));
  if (!found) return view.replaceChildren(failure(`There is no page "${path}"; pick one from the menu.`));
  const args = path.match(found[0]).slice(1).map(decodeURIComponent);
  try {
    const node = await found[1]({ args, params: new URLSearchParams(query ?? ''), signal: leaving.signal, refresh: route });
    if (!leaving.signal.aborted) view.replaceChildren(node);
  } catch (e) {
    if (!leaving.signal.aborted) view.replaceChildren(h('h1', {}, 'Something went wrong'), failure(e));
  }
}

document.getElementById('sign-out').addEventListener('click', signOut);
document.getElementById('sign-out').hidden = !signedIn();
addEventListener('hashchange', route);
route();
