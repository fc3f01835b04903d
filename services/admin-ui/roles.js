// `/admin/roles`: built-in and custom roles; create or change a custom role with its capabilities as
// checkboxes, delete one no user holds. The capability list is the union of the built-in roles'
// (the administrator holds every one), so the page names no capability itself.
import { api, byId, checkedValues, el, markReady, renderChecks, requireUser, say, withButton } from './common.js';

let canManage = false;
let capabilities = [];
/** The custom role being changed, or null when the form creates one. */
let editing = null;

function resetForm() {
  editing = null;
  byId('role-form').reset();
  renderChecks(byId('role-capabilities'), 'capability', capabilities);
  say('role-form-title', 'Create a role');
  byId('role-submit').textContent = 'Create role';
  byId('role-cancel').hidden = true;
}

function edit(role) {
  editing = role;
  byId('role-name').value = role.name;
  byId('role-description').value = role.description;
  renderChecks(byId('role-capabilities'), 'capability', capabilities, (value) => role.capabilities.includes(value));
  say('role-form-title', `Change the role ${role.name}`);
  byId('role-submit').textContent = 'Save role';
  byId('role-cancel').hidden = false;
  say('role-form-status', '');
  byId('role-name').focus();
}

function row(role) {
  const actions = [];
  if (canManage && !role.builtin) {
    const change = el('button', { type: 'button', className: 'secondary', 'aria-label': `Change role ${role.name}` }, 'Change');
    change.addEventListener('click', () => edit(role));
    const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Delete role ${role.name}` }, 'Delete');
    remove.addEventListener('click', () =>
      withButton(remove, 'roles-error', async () => {
        if (!confirm(`Delete the role ${role.name}?`)) return;
        await api('DELETE', `/api/roles/${encodeURIComponent(role.id)}`);
        await load();
      }),
    );
    actions.push(change, remove);
  }
  return el(
    'tr',
    { dataset: { roleId: role.id } },
    el('td', {}, role.name, role.description ? el('div', { className: 'muted small' }, role.description) : null),
    el('td', {}, role.builtin ? 'built-in' : 'custom'),
    el('td', { className: 'tags' }, role.capabilities.join(', ') || '—'),
    el('td', { className: 'actions' }, ...actions),
  );
}

async function load() {
  const { data } = await api('GET', '/api/roles?limit=200');
  capabilities = [...new Set(data.filter((role) => role.builtin).flatMap((role) => role.capabilities))].sort();
  byId('roles').replaceChildren(...data.map(row));
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  canManage = user.capabilities.includes('users:manage');
  byId('role-form-section').hidden = !canManage;
  try {
    await load();
  } catch (error) {
    say('roles-error', error.message);
  }
  resetForm();
  byId('role-cancel').addEventListener('click', resetForm);
  byId('role-form').addEventListener('submit', (event) => {
    event.preventDefault();
    return withButton(byId('role-submit'), 'role-form-error', async () => {
      const body = {
        name: byId('role-name').value.trim(),
        description: byId('role-description').value.trim(),
        capabilities: checkedValues(byId('role-capabilities')),
      };
      const saved = editing ? await api('PATCH', `/api/roles/${encodeURIComponent(editing.id)}`, body) : await api('POST', '/api/roles', body);
      resetForm();
      say('role-form-status', `Saved the role ${saved.name}.`);
      await load();
    });
  });
  byId('page').hidden = false;
  markReady();
}

void start();
