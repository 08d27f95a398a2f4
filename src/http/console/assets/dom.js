// Building the page from data without ever parsing data as HTML: every value
// becomes a text node or an attribute set through the DOM, so a key such as
// "<img onerror=...>" shows as those characters and runs nothing.

/** An element with attributes (on* names add listeners) and children (nodes, or anything else as text). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'class') element.className = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A link inside the console: the hash route is built from encoded parts, so a name cannot become a scheme. */
export function link(text, ...parts) {
  return h('a', { href: `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}` }, text);
}

/** A table from columns ({ title, cell(row), numeric }) and rows; a sentence when there are none. */
export function table(columns, rows, empty = 'Nothing here yet.') {
  if (rows.length === 0) return h('p', { class: 'muted empty' }, empty);
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { class: c.numeric ? 'num' : null }, c.title)))),
    h('tbody', {}, rows.map((row) => h('tr', {}, columns.map((c) => h('td', { class: c.numeric ? 'num' : null }, c.cell(row)))))),
  );
}

/** A titled block of the page. */
export function section(title, ...children) {
  return h('section', {}, h('h2', {}, title), ...children);
}

/** Small figures in a row: [label, value] pairs. */
export function figures(pairs) {
  return h('div', { class: 'figures' }, pairs.map(([label, value]) => h('div', { class: 'figure' }, h('span', { class: 'figure-value' }, value), h('span', { class: 'figure-label' }, label))));
}

/** A sentence saying what went wrong, in the place of a view. */
export function failure(error) {
  return h('p', { class: 'error', role: 'alert' }, error instanceof Error ? error.message : String(error));
}

/** Asks before an action: resolves true when the user confirms. */
export function confirmAction(title, text, action) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = action;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }));
}
