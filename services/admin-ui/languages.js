// `/admin/languages`: the site's languages; add one, switch it on/off, make it the default, delete it.
import { api, byId, el, markReady, requireUser, say, withButton } from './common.js';

let canManage = false;

function row(language) {
  const active = el('input', {
    type: 'checkbox',
    checked: language.active,
    disabled: !canManage || language.isDefault,
    'aria-label': `Active: ${language.name}`,
  });
  active.addEventListener('change', () =>
    withButton(active, 'languages-error', async () => {
      await api('PATCH', `/api/languages/${encodeURIComponent(language.id)}`, { active: active.checked });
      await load();
    }),
  );
  const actions = [];
  if (canManage && !language.isDefault) {
    const makeDefault = el('button', { type: 'button', className: 'secondary', 'aria-label': `Make default: ${language.name}` }, 'Make default');
    makeDefault.addEventListener('click', () =>
      withButton(makeDefault, 'languages-error', async () => {
        await api('PATCH', `/api/languages/${encodeURIComponent(language.id)}`, { isDefault: true });
        await load();
      }),
    );
    const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Delete language ${language.name}` }, 'Delete');
    remove.addEventListener('click', () =>
      withButton(remove, 'languages-error', async () => {
        if (!confirm(`Delete the language ${language.name}?`)) return;
        await api('DELETE', `/api/languages/${encodeURIComponent(language.id)}`);
        await load();
      }),
    );
    actions.push(makeDefault, remove);
  }
  return el(
    'tr',
    { dataset: { languageId: language.id } },
    el('td', {}, language.code),
    el('td', {}, language.name),
    el('td', {}, active),
    el('td', {}, language.isDefault ? 'default' : ''),
    el('td', { className: 'actions' }, ...actions),
  );
}

async function load() {
  const { data } = await api('GET', '/api/languages?limit=200');
  byId('languages').replaceChildren(...data.map(row));
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  canManage = user.capabilities.includes('settings:manage');
  byId('language-form').hidden = !canManage;
  byId('language-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    return withButton(form.querySelector('button[type=submit]'), 'language-form-error', async () => {
      await api('POST', '/api/languages', { code: byId('language-code').value.trim(), name: byId('language-name').value.trim() });
      form.reset();
      await load();
    });
  });
  try {
    await load();
  } catch (error) {
    say('languages-error', error.message);
  }
  byId('page').hidden = false;
  markReady();
}

void start();
