// `/admin/menus`: menus and their items, ordered by drag or by the keyboard (Move up / Move down),
// saved whole with `PUT /api/menus/:slug` (the operation replaces the menu).
import { api, byId, el, markReady, requireUser, say, withButton } from './common.js';

let canManage = false;
let menu = null;
/** The items being edited, in the shape the operation takes (`MenuItemInput`). */
let items = [];

/** A resolved item (the menu view) back to the input the operation takes. */
const toInput = (item) => ({
  label: item.label,
  ...(item.entry ? { entryId: item.entry.id } : item.url ? { url: item.url } : {}),
  ...(item.target && item.target !== '_self' ? { target: item.target } : {}),
  ...(item.children?.length ? { children: item.children.map(toInput) } : {}),
});

function move(list, index, by) {
  const target = index + by;
  if (target < 0 || target >= list.length) return false;
  const [item] = list.splice(index, 1);
  list.splice(target, 0, item);
  return true;
}

let dragged = null;

/** The items of one level; children are indented one level deeper and reorder among themselves. */
function renderLevel(list, depth) {
  return list.map((item, index) => {
    const name = item.label || item.url || 'item';
    const up = el('button', { type: 'button', className: 'secondary', 'aria-label': `Move up ${name}`, disabled: index === 0 }, '↑');
    const down = el('button', { type: 'button', className: 'secondary', 'aria-label': `Move down ${name}`, disabled: index === list.length - 1 }, '↓');
    const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Remove ${name}` }, 'Remove');
    const focusAfter = (label) => {
      render();
      byId('items')
        .querySelector(`button[aria-label="${CSS.escape(label)}"]`)
        ?.focus();
    };
    up.addEventListener('click', () => move(list, index, -1) && focusAfter(index - 1 === 0 ? `Move down ${name}` : `Move up ${name}`));
    down.addEventListener('click', () => move(list, index, 1) && focusAfter(index + 1 === list.length - 1 ? `Move up ${name}` : `Move down ${name}`));
    remove.addEventListener('click', () => {
      list.splice(index, 1);
      render();
    });
    const row = el(
      'li',
      { className: `menu-item depth-${depth}`, draggable: canManage, dataset: { label: name } },
      el('span', { className: 'drag-handle', 'aria-hidden': 'true' }, '⠿'),
      el('span', { className: 'menu-label' }, name),
      el('span', { className: 'muted small' }, item.entryId ? `entry ${item.entryId}` : (item.url ?? '')),
      canManage && el('span', { className: 'row' }, up, down, remove),
    );
    row.addEventListener('dragstart', (event) => {
      dragged = { list, index };
      event.dataTransfer.effectAllowed = 'move';
      event.dataTransfer.setData('text/plain', name);
    });
    row.addEventListener('dragover', (event) => {
      if (dragged?.list === list) event.preventDefault();
    });
    row.addEventListener('drop', (event) => {
      event.preventDefault();
      if (!dragged || dragged.list !== list) return;
      move(list, dragged.index, index - dragged.index);
      dragged = null;
      render();
    });
    const children = item.children?.length ? el('ol', { className: 'menu-items' }, ...renderLevel(item.children, depth + 1)) : null;
    if (children) row.append(children);
    return row;
  });
}

function render() {
  byId('items').replaceChildren(...renderLevel(items, 0));
}

async function openMenu(slug) {
  menu = await api('GET', `/api/menus/${encodeURIComponent(slug)}`);
  items = menu.items.map(toInput);
  say('editor-title', `${menu.name} (${menu.slug})`);
  say('editor-status', '');
  say('editor-error', '');
  byId('editor').hidden = false;
  render();
}

async function loadMenus() {
  const { data } = await api('GET', '/api/menus?limit=200');
  byId('menu-list').replaceChildren(
    ...data.map((each) => {
      const open = el('button', { type: 'button', className: 'secondary', 'aria-label': `Edit menu ${each.name}` }, each.name);
      open.addEventListener('click', () => withButton(open, 'menus-error', () => openMenu(each.slug)));
      return el('li', {}, open, ' ', el('span', { className: 'muted small' }, `${each.slug} · ${each.items.length} items`));
    }),
  );
  byId('menus-empty').hidden = data.length > 0;
}

function wire() {
  byId('menu-create').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    return withButton(form.querySelector('button[type=submit]'), 'create-error', async () => {
      const created = await api('POST', '/api/menus', { slug: byId('menu-slug').value.trim(), name: byId('menu-name').value.trim() });
      form.reset();
      await loadMenus();
      await openMenu(created.slug);
    });
  });
  byId('item-add').addEventListener('submit', (event) => {
    event.preventDefault();
    items.push({ label: byId('item-label').value.trim(), url: byId('item-url').value.trim() });
    event.currentTarget.reset();
    render();
    byId('item-label').focus();
  });
  byId('menu-save').addEventListener('click', () =>
    withButton(byId('menu-save'), 'editor-error', async () => {
      const { slug, name, locale, location, layout, design } = menu;
      menu = await api('PUT', `/api/menus/${encodeURIComponent(slug)}`, { name, locale, location, layout, design, items });
      items = menu.items.map(toInput);
      render();
      say('editor-status', 'Saved.');
      await loadMenus();
    }),
  );
  byId('menu-delete').addEventListener('click', () =>
    withButton(byId('menu-delete'), 'editor-error', async () => {
      if (!confirm(`Delete the menu ${menu.name}? It goes to the trash.`)) return;
      await api('DELETE', `/api/menus/${encodeURIComponent(menu.slug)}`);
      byId('editor').hidden = true;
      menu = null;
      await loadMenus();
    }),
  );
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  canManage = user.capabilities.includes('settings:manage');
  // Without settings:manage the menus are shown, not offered for change (the API refuses anyway).
  for (const id of ['menu-create', 'item-add', 'menu-save', 'menu-delete', 'reorder-help']) byId(id).hidden = !canManage;
  wire();
  await loadMenus();
  byId('page').hidden = false;
  markReady();
}

void start();
