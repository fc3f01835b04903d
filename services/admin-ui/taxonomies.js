// `/admin/taxonomies`: taxonomies (create a custom one) and the terms of one as a tree (parent /
// child, indented by level); add a term under a parent, delete one.
import { api, byId, el, markReady, requireUser, say, withButton } from './common.js';

let can = new Set();
let taxonomy = null;

/** Every term of the taxonomy (the list pages by cursor). */
async function allTerms(slug) {
  const terms = [];
  let cursor = null;
  do {
    const { data, page } = await api(
      'GET',
      `/api/taxonomies/${encodeURIComponent(slug)}/terms?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    terms.push(...data);
    cursor = page.nextCursor;
  } while (cursor);
  return terms;
}

/** Depth-first order with each term's level; a term whose parent is missing shows at the top. */
function flatten(terms) {
  const ids = new Set(terms.map((term) => term.id));
  const children = new Map();
  for (const term of terms) {
    const parent = term.parentId && ids.has(term.parentId) ? term.parentId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(term);
  }
  for (const list of children.values()) list.sort((a, b) => a.name.localeCompare(b.name));
  const out = [];
  const walk = (parent, level) => {
    for (const term of children.get(parent) ?? []) {
      out.push({ term, level });
      walk(term.id, level + 1);
    }
  };
  walk(null, 0);
  return out;
}

async function openTaxonomy(slug) {
  taxonomy = (await api('GET', `/api/taxonomies/${encodeURIComponent(slug)}`)) ?? null;
  byId('terms-section').hidden = false;
  say('terms-title', `Terms of ${taxonomy.label}`);
  byId('term-parent-field').hidden = !taxonomy.hierarchical;
  await loadTerms();
}

async function loadTerms() {
  const tree = flatten(await allTerms(taxonomy.slug));
  byId('terms').replaceChildren(
    ...tree.map(({ term, level }) => {
      const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Delete term ${term.name}` }, 'Delete');
      remove.addEventListener('click', () =>
        withButton(remove, 'terms-error', async () => {
          if (!confirm(`Delete the term ${term.name}? Entries lose it.`)) return;
          await api('DELETE', `/api/taxonomies/${encodeURIComponent(taxonomy.slug)}/terms/${encodeURIComponent(term.id)}`);
          await loadTerms();
        }),
      );
      return el(
        'li',
        { className: `term level-${Math.min(level, 5)}`, dataset: { termId: term.id, level: String(level) } },
        el('span', { className: 'visually-hidden' }, `Level ${level + 1}: `),
        el('span', { className: 'term-name' }, term.name),
        el('span', { className: 'muted small' }, term.slug),
        can.has('content:publish') && remove,
      );
    }),
  );
  byId('terms-empty').hidden = tree.length > 0;
  byId('term-parent').replaceChildren(
    el('option', { value: '' }, '(none: top level)'),
    ...tree.map(({ term, level }) => el('option', { value: term.id }, `${'— '.repeat(level)}${term.name}`)),
  );
}

async function loadTaxonomies() {
  const { data } = await api('GET', '/api/taxonomies?limit=200');
  byId('taxonomy-list').replaceChildren(
    ...data.map((each) => {
      const open = el('button', { type: 'button', className: 'secondary', 'aria-label': `Terms of ${each.label}` }, each.label);
      open.addEventListener('click', () => withButton(open, 'taxonomies-error', () => openTaxonomy(each.slug)));
      return el(
        'li',
        {},
        open,
        ' ',
        el('span', { className: 'muted small' }, `${each.slug}${each.hierarchical ? ' · hierarchical' : ''}${each.builtin ? ' · built-in' : ''}`),
      );
    }),
  );
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  can = new Set(user.capabilities);
  byId('taxonomy-form').hidden = !can.has('settings:manage');
  byId('term-form').hidden = !can.has('content:publish');
  byId('taxonomy-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    return withButton(form.querySelector('button[type=submit]'), 'taxonomy-form-error', async () => {
      const created = await api('POST', '/api/taxonomies', {
        slug: byId('taxonomy-slug').value.trim(),
        label: byId('taxonomy-label').value.trim(),
        hierarchical: byId('taxonomy-hierarchical').checked,
      });
      form.reset();
      await loadTaxonomies();
      await openTaxonomy(created.slug);
    });
  });
  byId('term-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    return withButton(form.querySelector('button[type=submit]'), 'term-form-error', async () => {
      const parentId = taxonomy.hierarchical && byId('term-parent').value ? byId('term-parent').value : null;
      await api('POST', `/api/taxonomies/${encodeURIComponent(taxonomy.slug)}/terms`, { name: byId('term-name').value.trim(), parentId });
      byId('term-name').value = '';
      await loadTerms();
      byId('term-name').focus();
    });
  });
  try {
    await loadTaxonomies();
  } catch (error) {
    say('taxonomies-error', error.message);
  }
  byId('page').hidden = false;
  markReady();
}

void start();
