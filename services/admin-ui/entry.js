// `/admin/entry?id=…` (or `/admin/entry` for a new one; `?type=&locale=&slug=&title=` prefill it):
// the entry editor. Title, slug, excerpt, blocks, the type's custom fields, terms, header, the
// other locales' entries; save with optimistic concurrency (a 409 shows both versions side by
// side), autosave of drafts, publish / unpublish / schedule, preview, revisions and trash.
import { api, ApiError, byId, el, formatDate, markReady, requireUser, say } from './common.js';
import { can, loadChoices, option } from './content-common.js';
import { BLOCK_TYPES, blockEditor, mediaPicker, typeLabel } from './entry-blocks.js';
import { compareRows } from './entry-diff.js';
import { revisionsPanel } from './entry-revisions.js';

/** Quiet time after the last keystroke before a draft is saved by itself. */
const AUTOSAVE_MS = 1500;
const params = new URLSearchParams(location.search);
let user = null;
let choices = null;
/** The entry as the server last answered (null until a new entry is first saved). */
let entry = null;
let blocks = [];
let editor = null;
let headerParts = [];
let autosaveTimer = null;
/** The schedule the date inputs were last set from. */
let shownSchedule = null;
let dirty = false;
/** Saves run one after the other (an autosave and a click never race each other). */
let queue = Promise.resolve();

const entryPath = (suffix = '') => `/api/content/${encodeURIComponent(entry.id)}${suffix}`;

// ---- time zones: the schedule inputs are in the browser's zone, stated next to them ----
function zoneLabel() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
  const minutes = -new Date().getTimezoneOffset();
  const sign = minutes < 0 ? '−' : '+';
  const abs = Math.abs(minutes);
  return `${zone}, UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
const pad = (n) => String(n).padStart(2, '0');
/** An ISO instant as a `datetime-local` value in the browser's zone. */
function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
/** A `datetime-local` value (read in the browser's zone) as an ISO instant, or null. */
const fromLocalInput = (value) => (value ? new Date(value).toISOString() : null);

// ---- custom fields of the type ----
function typeOf(slug) {
  return choices.types.find((type) => type.slug === slug) ?? { slug, label: slug, fields: [] };
}

function fieldControl(definition, value) {
  const id = `field-${definition.name}`;
  const label = el('label', { htmlFor: id }, `${definition.label || definition.name}${definition.required ? ' (required)' : ''}`);
  let control;
  switch (definition.kind) {
    case 'boolean':
      control = el('input', { type: 'checkbox', id, checked: value === true });
      return el('div', { className: 'check', dataset: { field: definition.name, kind: definition.kind } }, control, label);
    case 'text':
      control = el('textarea', { id, rows: 3, value: value ?? '' });
      break;
    case 'select':
      control = el('select', { id }, option('', '—'), ...(definition.options ?? []).map((o) => option(o, o)));
      control.value = value ?? '';
      break;
    case 'list':
    case 'object':
      control = el('textarea', { id, rows: 3, className: 'code', value: value === undefined ? '' : JSON.stringify(value, null, 2) });
      break;
    default: {
      const type = { number: 'number', integer: 'number', url: 'url', date: 'date' }[definition.kind] ?? 'text';
      const shown = definition.kind === 'date' && typeof value === 'string' ? value.slice(0, 10) : (value ?? '');
      control = el('input', { id, type, value: String(shown) });
      if (definition.kind === 'integer') control.step = '1';
      if (definition.min !== undefined) control.min = String(definition.min);
      if (definition.max !== undefined) control.max = String(definition.max);
      if (definition.maxLength) control.maxLength = definition.maxLength;
    }
  }
  control.required = definition.required;
  return el('div', { className: 'stack wide', dataset: { field: definition.name, kind: definition.kind } }, label, control);
}

function renderFields(type, values) {
  const definitions = typeOf(type).fields;
  byId('fields-section').hidden = definitions.length === 0;
  byId('custom-fields').replaceChildren(...definitions.map((definition) => fieldControl(definition, values[definition.name])));
}

/** The custom fields as the API takes them: an emptied field is `null` (removed). Throws on bad JSON. */
function collectFields() {
  const fields = {};
  for (const wrapper of byId('custom-fields').children) {
    const { field, kind } = wrapper.dataset;
    const control = wrapper.querySelector('input, textarea, select');
    if (kind === 'boolean') fields[field] = control.checked;
    else if (control.value === '') fields[field] = null;
    else if (kind === 'number' || kind === 'integer') fields[field] = Number(control.value);
    else if (kind === 'list' || kind === 'object') {
      try {
        fields[field] = JSON.parse(control.value);
      } catch {
        throw new ApiError(400, `${field}: not valid JSON`);
      }
    } else fields[field] = control.value;
  }
  return fields;
}

// ---- terms and header ----
function renderTerms(type, chosen) {
  const taxonomies = choices.taxonomies.filter((taxonomy) => taxonomy.types.includes(type));
  byId('terms-section').hidden = taxonomies.length === 0;
  byId('terms').replaceChildren(
    ...taxonomies.map((taxonomy) =>
      el(
        'fieldset',
        { dataset: { taxonomy: taxonomy.slug } },
        el('legend', {}, taxonomy.label),
        taxonomy.terms.length === 0 ? el('p', { className: 'muted small' }, 'No terms yet.') : null,
        ...taxonomy.terms.map((term) =>
          el(
            'label',
            { className: 'check' },
            el('input', { type: 'checkbox', value: term.id, checked: (chosen[taxonomy.slug] ?? []).includes(term.id) }),
            term.name,
          ),
        ),
      ),
    ),
  );
}

function collectTerms() {
  const terms = {};
  for (const set of byId('terms').querySelectorAll('fieldset')) {
    terms[set.dataset.taxonomy] = [...set.querySelectorAll('input:checked')].map((box) => box.value);
  }
  return terms;
}

function termsChanged(terms) {
  const current = entry?.terms ?? {};
  return Object.entries(terms).some(([slug, ids]) => JSON.stringify([...ids].sort()) !== JSON.stringify([...(current[slug] ?? [])].sort()));
}

function renderHeader(ref) {
  const select = byId('entry-header');
  select.replaceChildren(option('default', 'Site default'), option('none', 'No header'), ...headerParts.map((part) => option(`library:${part}`, part)));
  select.value = ref.mode === 'library' ? `library:${ref.name}` : ref.mode;
  byId('header-section').hidden = false;
}

function collectHeader() {
  const value = byId('entry-header').value;
  return value.startsWith('library:') ? { mode: 'library', name: value.slice('library:'.length) } : { mode: value };
}

// ---- the form ----
function collect() {
  const slug = byId('entry-slug').value.trim();
  return {
    title: byId('entry-title').value,
    ...(slug ? { slug } : {}),
    excerpt: byId('entry-excerpt').value || null,
    blocks: { version: 1, blocks: structuredClone(blocks) },
    fields: collectFields(),
  };
}

function showState() {
  byId('entry-heading').textContent = entry ? (entry.title ? `Edit “${entry.title}”` : 'Edit entry') : 'New entry';
  document.title = `${entry ? entry.title : 'New entry'} · Content · Administration`;
  say(
    'entry-state',
    entry
      ? `${typeLabel(entry.type)} · ${entry.locale} · ${entry.status} · version ${entry.version}${entry.publishedAt ? ` · published ${formatDate(entry.publishedAt)}` : ''}`
      : '',
  );
  const publisher = can(user, 'content:publish');
  byId('publish').hidden = !publisher;
  byId('publish').textContent = entry?.status === 'published' ? 'Publish changes' : 'Publish';
  byId('unpublish').hidden = !publisher || !entry || entry.status !== 'published';
  byId('preview').hidden = !entry;
  byId('trash').hidden = !entry || !can(user, 'content:delete');
  byId('schedule-section').hidden = !entry || !(publisher && can(user, 'content:update'));
  byId('save').hidden = !can(user, entry ? 'content:update' : 'content:create');
  byId('new-only').hidden = Boolean(entry);
  byId('revisions-section').hidden = !entry || !can(user, 'content:revisions:read');
  say(
    'autosave-note',
    !entry
      ? 'Autosave starts once the entry is saved.'
      : entry.status === 'draft'
        ? 'Drafts are saved automatically as you type.'
        : 'Autosave is for drafts; Save writes the working revision.',
  );
  if (entry) {
    // The date inputs follow the server only when its schedule changed (an autosave must not wipe a date being typed).
    const schedule = `${entry.publishOn}|${entry.unpublishOn}`;
    if (schedule !== shownSchedule) {
      shownSchedule = schedule;
      byId('publish-on').value = toLocalInput(entry.publishOn);
      byId('unpublish-on').value = toLocalInput(entry.unpublishOn);
    }
    say(
      'schedule-state',
      entry.publishOn || entry.unpublishOn
        ? `Scheduled: ${entry.publishOn ? `publish ${formatDate(entry.publishOn)}` : ''}${entry.publishOn && entry.unpublishOn ? ', ' : ''}${entry.unpublishOn ? `unpublish ${formatDate(entry.unpublishOn)}` : ''}.`
        : 'Not scheduled.',
    );
  }
}

/** Puts an entry (the server's answer) into the form. */
function load(view) {
  entry = view;
  dirty = false;
  byId('entry-title').value = view.title;
  byId('entry-slug').value = view.slug;
  byId('entry-excerpt').value = view.excerpt ?? '';
  blocks.splice(0, blocks.length, ...structuredClone(view.blocks.blocks));
  editor.render();
  renderFields(view.type, view.fields);
  renderTerms(view.type, view.terms);
  renderHeader(view.headerRef);
  showState();
  loadVariants().catch(() => undefined);
}

/** Content fields, terms and header as separate writes, each at the version the last one left. */
async function write(data, terms, header, expectedVersion) {
  let view = await api('PATCH', entryPath(), { ...data, expectedVersion });
  if (terms && termsChanged(terms)) view = await api('PUT', entryPath('/terms'), { terms, expectedVersion: view.version });
  if (header && JSON.stringify(header) !== JSON.stringify(entry.headerRef)) {
    view = await api('PUT', entryPath('/header-ref'), { headerRef: header, expectedVersion: view.version });
  }
  return view;
}

function saved(view, how) {
  load(view);
  say('save-status', `${how} at ${new Date().toLocaleTimeString()}.`);
  if (can(user, 'content:revisions:read')) revisions?.reload();
}

async function create() {
  const data = collect();
  const body = { ...data, type: byId('entry-type').value, locale: byId('entry-locale').value || undefined };
  if (body.excerpt === null) delete body.excerpt;
  let view = await api('POST', '/api/content', body);
  entry = view;
  const terms = collectTerms();
  if (termsChanged(terms)) view = await api('PUT', entryPath('/terms'), { terms, expectedVersion: view.version });
  history.replaceState(null, '', `/admin/entry?id=${encodeURIComponent(view.id)}`);
  saved(view, 'Saved');
}

/** Saves the form; a 409 (someone else wrote first) opens the comparison instead. */
function save(how = 'Saved') {
  clearTimeout(autosaveTimer);
  queue = queue.then(async () => {
    say('entry-error', '');
    try {
      if (!entry) return await create();
      const data = collect();
      saved(await write(data, collectTerms(), collectHeader(), entry.version), how);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409 && entry) return showConflict();
      // Not rethrown: the queue must stay usable; the form stays dirty, so nothing builds on it.
      say('entry-error', error instanceof ApiError ? error.message : 'Something went wrong. Try again.');
    }
  });
  return queue;
}

// ---- conflict: both versions side by side, the user chooses ----
let conflictServer = null;
async function showConflict() {
  conflictServer = await api('GET', entryPath());
  const mine = collect();
  byId('conflict-version').textContent = String(conflictServer.version);
  byId('conflict-rows').replaceChildren(...compareRows(mine, conflictServer));
  byId('conflict-panel').hidden = false;
  byId('conflict-panel').scrollIntoView({ block: 'nearest' });
  byId('conflict-keep-mine').focus();
  say('save-status', '');
}

byId('conflict-keep-mine').addEventListener('click', () => {
  // Mine, written over the version just shown (a newer change would conflict again).
  const server = conflictServer;
  byId('conflict-panel').hidden = true;
  queue = queue.then(async () => {
    try {
      const view = await write(collect(), collectTerms(), collectHeader(), server.version);
      saved(view, 'Saved your version');
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) return showConflict();
      say('entry-error', error instanceof ApiError ? error.message : 'Something went wrong. Try again.');
    }
  });
});
byId('conflict-take-theirs').addEventListener('click', () => {
  byId('conflict-panel').hidden = true;
  load(conflictServer);
  say('save-status', `Took the saved version ${conflictServer.version}.`);
});

// ---- autosave: drafts only, after a quiet moment ----
byId('entry-form').addEventListener('input', markDirty);
byId('entry-form').addEventListener('change', markDirty);
function markDirty(event) {
  // The schedule's dates are not entry content: they are sent by Schedule, not saved.
  if (event?.target?.closest?.('#schedule-section')) return;
  dirty = true;
  say('save-status', 'Unsaved changes.');
  clearTimeout(autosaveTimer);
  if (entry && entry.status === 'draft' && byId('conflict-panel').hidden && can(user, 'content:update')) {
    autosaveTimer = setTimeout(() => save('Saved'), AUTOSAVE_MS);
  }
}

byId('entry-form').addEventListener('submit', (event) => {
  event.preventDefault();
  save();
});

/** A status action after any pending change is saved first. */
function statusAction(button, run) {
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      if (dirty || !entry) await save();
      if (dirty || !entry || !byId('conflict-panel').hidden) return;
      queue = queue.then(async () => {
        try {
          await run();
        } catch (error) {
          say('entry-error', error instanceof ApiError ? error.message : 'Something went wrong. Try again.');
        }
      });
      await queue;
    } finally {
      button.disabled = false;
    }
  });
}

statusAction(byId('publish'), async () => saved(await api('POST', entryPath('/publish'), { expectedVersion: entry.version }), 'Published'));
statusAction(byId('unpublish'), async () => saved(await api('POST', entryPath('/unpublish'), { expectedVersion: entry.version }), 'Unpublished'));
statusAction(byId('schedule'), async () => {
  const publishOn = fromLocalInput(byId('publish-on').value);
  const unpublishOn = fromLocalInput(byId('unpublish-on').value);
  if (!publishOn && !unpublishOn) throw new ApiError(400, 'Choose a publish or an unpublish date.');
  saved(await api('PUT', entryPath('/schedule'), { publishOn, unpublishOn, expectedVersion: entry.version }), 'Scheduled');
});
statusAction(byId('schedule-cancel'), async () =>
  saved(await api('PUT', entryPath('/schedule'), { publishOn: null, unpublishOn: null, expectedVersion: entry.version }), 'Schedule cancelled'),
);

byId('trash').addEventListener('click', async () => {
  if (!confirm(`Move “${entry.title}” to the trash? It can be restored from the trash.`)) return;
  try {
    await queue;
    await api('DELETE', entryPath());
    location.assign(`/admin/trash?moved=${encodeURIComponent(entry.id)}`);
  } catch (error) {
    say('entry-error', error instanceof ApiError ? error.message : 'Something went wrong. Try again.');
  }
});

// ---- preview: the Public API's `preview=1` read on this session ----
const publicAddress = (slug, locale) => `/api/v1/content/${encodeURIComponent(slug)}?locale=${encodeURIComponent(locale)}&preview=1`;
byId('preview').addEventListener('click', async () => {
  try {
    if (dirty) await save();
    const address = publicAddress(entry.slug, entry.locale);
    const view = await api('GET', address);
    byId('preview-link').href = address;
    byId('preview-body').replaceChildren(
      el('h3', {}, view.title),
      view.excerpt ? el('p', { className: 'muted' }, view.excerpt) : null,
      ...(view.blocks?.blocks ?? []).map((block) => previewBlock(block)),
      el('p', { className: 'muted small' }, `Address on the site: ${view.path}`),
    );
    byId('preview-panel').hidden = false;
    byId('preview-panel').scrollIntoView({ block: 'nearest' });
  } catch (error) {
    say('entry-error', error instanceof ApiError ? error.message : 'The preview failed.');
  }
});

/** A block as text (the site renders it; here only what it says). */
function previewBlock(block) {
  const value = (name) => block?.[name] ?? block?.data?.[name];
  switch (block?.type) {
    case 'heading':
      return el('h4', {}, value('text') ?? '');
    case 'list':
      return el(
        value('ordered') ? 'ol' : 'ul',
        {},
        ...(value('items') ?? []).map((item) => el('li', {}, typeof item === 'string' ? item : (item?.text ?? ''))),
      );
    case 'image':
      return value('mediaId')
        ? el(
            'figure',
            {},
            el('img', { src: `/media/files/${encodeURIComponent(value('mediaId'))}/image`, alt: value('alt') ?? '', className: 'preview-image' }),
            value('caption') ? el('figcaption', {}, value('caption')) : null,
          )
        : el('p', { className: 'muted' }, '[image]');
    case 'separator':
      return el('hr');
    default:
      return el('p', {}, value('text') ?? value('html') ?? `[${typeLabel(String(block?.type ?? 'block'))}]`);
  }
}

// ---- the same entry in the other languages (same slug) ----
async function loadVariants() {
  const others = choices.languages.filter((language) => language.code !== entry.locale);
  byId('variants-section').hidden = others.length === 0;
  const items = await Promise.all(
    others.map(async (language) => {
      try {
        const found = await api('GET', publicAddress(entry.slug, language.code));
        return el('li', {}, el('a', { href: `/admin/entry?id=${encodeURIComponent(found.id)}` }, `${language.name} (${language.code}): ${found.title}`));
      } catch {
        const query = new URLSearchParams({ type: entry.type, locale: language.code, slug: entry.slug, title: entry.title });
        return el(
          'li',
          {},
          can(user, 'content:create')
            ? el('a', { href: `/admin/entry?${query}` }, `Create the ${language.name} (${language.code}) version`)
            : `${language.name}: none`,
        );
      }
    }),
  );
  byId('variants').replaceChildren(...items);
}

// ---- start ----
let revisions = null;
byId('add-block').addEventListener('click', () => editor.add(byId('new-block-type').value));

user = await requireUser();
if (user) {
  byId('page').hidden = false;
  for (const zone of document.querySelectorAll('.zone')) zone.textContent = zoneLabel();
  try {
    choices = await loadChoices(user);
    headerParts = await api('GET', '/api/headers?limit=200').then(
      (answer) => answer.data.map((part) => part.part),
      () => [],
    );
    editor = blockEditor(byId('blocks'), blocks, {
      onChange: markDirty,
      media: mediaPicker({ canUpload: can(user, 'media:upload'), onError: (message) => say('entry-error', message) }),
    });
    byId('new-block-type').append(...BLOCK_TYPES.map((type) => option(type, typeLabel(type))));
    byId('entry-type').append(...choices.types.map((type) => option(type.slug, type.label)));
    byId('entry-locale').append(...choices.languages.map((language) => option(language.code, `${language.name} (${language.code})`)));
    byId('entry-type').addEventListener('change', () => {
      renderFields(byId('entry-type').value, {});
      renderTerms(byId('entry-type').value, {});
    });
    revisions = revisionsPanel({
      entry: () => entry,
      canRestore: can(user, 'content:update'),
      restored: (view) => saved(view, 'Restored'),
    });
    const id = params.get('id');
    if (id) {
      load(await api('GET', `/api/content/${encodeURIComponent(id)}`));
      if (can(user, 'content:revisions:read')) await revisions.reload();
    } else {
      for (const name of ['type', 'locale']) if (params.get(name)) byId(`entry-${name}`).value = params.get(name);
      byId('entry-title').value = params.get('title') ?? '';
      byId('entry-slug').value = params.get('slug') ?? '';
      renderFields(byId('entry-type').value || 'post', {});
      renderTerms(byId('entry-type').value || 'post', {});
      byId('header-section').hidden = true;
      editor.render();
      showState();
    }
  } catch (error) {
    say('entry-error', error instanceof ApiError ? error.message : 'The entry could not be loaded.');
  }
  markReady();
}
