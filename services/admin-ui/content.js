// `/admin/content`: the entries of the site with filters, search, sort and cursor paging, bulk
// publish / unpublish / trash over the rows picked by checkbox, and links to the editor. The
// filters live in the address (`?type=post&status=draft…`), so a filtered list can be linked.
import { api, ApiError, byId, el, formatDate, markReady, requireUser, say } from './common.js';
import { can, loadChoices, option } from './content-common.js';

const FILTERS = ['search', 'type', 'status', 'locale', 'author', 'term', 'sort'];
/** Cursors of the pages before the current one (Previous pops), and the current page's own. */
let previousCursors = [];
let currentCursor = null;
let nextCursor = null;
let user = null;

function filterValues() {
  return Object.fromEntries(FILTERS.map((name) => [name, byId(`filter-${name}`).value]));
}

function listQuery(cursor) {
  const values = filterValues();
  const query = new URLSearchParams({ limit: '25' });
  for (const name of ['search', 'type', 'status', 'locale', 'author']) if (values[name]) query.set(name, values[name]);
  // `term` narrows a search (content.list); without one the select is disabled.
  if (values.search.trim() && values.term) query.set('term', values.term);
  if (!values.search.trim()) query.set('order', values.sort === 'oldest' ? 'oldest' : 'newest');
  if (cursor) query.set('cursor', cursor);
  return query;
}

function syncControls() {
  const searching = byId('filter-search').value.trim() !== '';
  byId('filter-term').disabled = !searching;
  byId('filter-sort').disabled = searching;
  byId('sort-note').hidden = !searching;
}

function rememberFilters() {
  const values = filterValues();
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value && !(name === 'sort' && value === 'newest')) query.set(name, value);
  const search = query.toString();
  history.replaceState(null, '', search ? `?${search}` : location.pathname);
}

function entryRow(entry) {
  const title = entry.title || '(untitled)';
  return el(
    'tr',
    { dataset: { entryId: entry.id } },
    el(
      'td',
      {},
      el('input', {
        type: 'checkbox',
        className: 'pick',
        value: entry.id,
        'aria-label': `Select ${title}`,
        dataset: { status: entry.status, version: String(entry.version) },
      }),
    ),
    el('td', {}, el('a', { href: `/admin/entry?id=${encodeURIComponent(entry.id)}` }, title), el('div', { className: 'muted small' }, entry.slug)),
    el('td', {}, entry.type),
    el('td', {}, el('span', { className: `status-${entry.status}` }, entry.status)),
    el('td', {}, entry.locale),
    el('td', {}, formatDate(entry.updatedAt)),
  );
}

function picked() {
  return [...document.querySelectorAll('#entries input.pick:checked')];
}

function updateSelection() {
  const boxes = [...document.querySelectorAll('#entries input.pick')];
  const count = picked().length;
  say('selected-count', `${count} selected`);
  for (const id of ['bulk-publish', 'bulk-unpublish', 'bulk-trash']) byId(id).disabled = count === 0;
  const all = byId('select-all');
  all.checked = count > 0 && count === boxes.length;
  all.indeterminate = count > 0 && count < boxes.length;
}

async function loadPage(cursor) {
  say('entries-error', '');
  const { data, page } = await api('GET', `/api/content?${listQuery(cursor)}`);
  currentCursor = cursor;
  nextCursor = page.nextCursor;
  byId('entries').replaceChildren(...data.map(entryRow));
  byId('entries-empty').hidden = data.length > 0;
  byId('page-next').disabled = !nextCursor;
  byId('page-previous').disabled = previousCursors.length === 0;
  say('page-number', `Page ${previousCursors.length + 1}`);
  updateSelection();
}

async function reload() {
  previousCursors = [];
  rememberFilters();
  syncControls();
  await loadPage(null);
}

/** One call per picked entry, in order; the outcome is counted, not stopped at the first refusal. */
async function bulk(verb, request) {
  const boxes = picked();
  if (boxes.length === 0) return;
  if (verb === 'trashed' && !confirm(`Move ${boxes.length} entries to the trash?`)) return;
  say('entries-status', '');
  say('entries-error', '');
  let done = 0;
  const failures = [];
  for (const box of boxes) {
    try {
      await request(box.value, Number(box.dataset.version));
      done++;
    } catch (error) {
      failures.push(error instanceof ApiError ? error.message : 'failed');
    }
  }
  say('entries-status', `${done} ${verb}.`);
  if (failures.length) say('entries-error', `${failures.length} not ${verb}: ${[...new Set(failures)].join('; ')}`);
  await loadPage(currentCursor);
}

const entryPath = (id) => `/api/content/${encodeURIComponent(id)}`;
byId('bulk-publish').addEventListener('click', () => bulk('published', (id, version) => api('POST', `${entryPath(id)}/publish`, { expectedVersion: version })));
byId('bulk-unpublish').addEventListener('click', () =>
  bulk('unpublished', (id, version) => api('POST', `${entryPath(id)}/unpublish`, { expectedVersion: version })),
);
byId('bulk-trash').addEventListener('click', () => bulk('trashed', (id) => api('DELETE', entryPath(id))));

byId('entries').addEventListener('change', updateSelection);
byId('select-all').addEventListener('change', (event) => {
  for (const box of document.querySelectorAll('#entries input.pick')) box.checked = event.currentTarget.checked;
  updateSelection();
});
byId('page-next').addEventListener('click', () => {
  if (!nextCursor) return;
  previousCursors.push(currentCursor);
  loadPage(nextCursor).catch((error) => say('entries-error', error.message));
});
byId('page-previous').addEventListener('click', () => {
  if (previousCursors.length === 0) return;
  loadPage(previousCursors.pop()).catch((error) => say('entries-error', error.message));
});
byId('filters').addEventListener('submit', (event) => {
  event.preventDefault();
  reload().catch((error) => say('entries-error', error.message));
});
byId('filter-search').addEventListener('input', syncControls);
for (const name of ['type', 'status', 'locale', 'author', 'sort']) {
  byId(`filter-${name}`).addEventListener('change', () => reload().catch((error) => say('entries-error', error.message)));
}

async function fillFilters() {
  const choices = await loadChoices(user);
  byId('filter-type').append(...choices.types.map((type) => option(type.slug, type.label)));
  byId('filter-locale').append(...choices.languages.map((language) => option(language.code, `${language.name} (${language.code})`)));
  byId('filter-author').append(option(user.id, 'Me'), ...choices.users.filter((u) => u.id !== user.id).map((u) => option(u.id, u.name || u.email)));
  for (const taxonomy of choices.taxonomies) {
    const group = el('optgroup', { label: taxonomy.label });
    group.append(...taxonomy.terms.map((term) => option(term.id, term.name)));
    if (taxonomy.terms.length) byId('filter-term').append(group);
  }
  const given = new URLSearchParams(location.search);
  for (const name of FILTERS) if (given.get(name)) byId(`filter-${name}`).value = given.get(name);
}

user = await requireUser();
if (user) {
  byId('page').hidden = false;
  byId('new-entry').hidden = !can(user, 'content:create');
  byId('bulk-publish').hidden = !can(user, 'content:publish');
  byId('bulk-unpublish').hidden = !can(user, 'content:publish');
  byId('bulk-trash').hidden = !can(user, 'content:delete');
  await fillFilters().catch((error) => say('entries-error', error.message));
  syncControls();
  await loadPage(null).catch((error) => say('entries-error', error.message));
  markReady();
}
