// `/admin/redirects`: the site's redirect rules; add, switch on/off, delete.
import { api, byId, el, markReady, requireUser, say, withButton } from './common.js';

let canManage = false;
let nextCursor = null;

function row(rule) {
  const enabled = el('input', { type: 'checkbox', checked: rule.enabled, disabled: !canManage, 'aria-label': `Enabled: ${rule.from}` });
  enabled.addEventListener('change', () =>
    withButton(enabled, 'redirects-error', async () => {
      const { from, to, status } = rule;
      Object.assign(rule, await api('PUT', `/api/redirects/${encodeURIComponent(rule.id)}`, { from, to, status, enabled: enabled.checked }));
    }),
  );
  const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Delete redirect ${rule.from}` }, 'Delete');
  remove.addEventListener('click', () =>
    withButton(remove, 'redirects-error', async () => {
      if (!confirm(`Delete the redirect from ${rule.from}?`)) return;
      await api('DELETE', `/api/redirects/${encodeURIComponent(rule.id)}`);
      await load();
    }),
  );
  return el(
    'tr',
    { dataset: { redirectId: rule.id } },
    el('td', {}, rule.from),
    el('td', {}, rule.to),
    el('td', {}, String(rule.status)),
    el('td', {}, enabled),
    el('td', { className: 'actions' }, canManage && remove),
  );
}

async function load(append = false) {
  const query = append && nextCursor ? `&cursor=${encodeURIComponent(nextCursor)}` : '';
  const { data, page } = await api('GET', `/api/redirects?limit=100${query}`);
  if (append) byId('redirects').append(...data.map(row));
  else byId('redirects').replaceChildren(...data.map(row));
  nextCursor = page.nextCursor;
  byId('redirects-more').hidden = !nextCursor;
  byId('redirects-empty').hidden = byId('redirects').children.length > 0;
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  canManage = user.capabilities.includes('settings:manage');
  byId('redirect-form-section').hidden = !canManage;
  byId('redirect-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    return withButton(form.querySelector('button[type=submit]'), 'redirect-form-error', async () => {
      await api('POST', '/api/redirects', { from: byId('redirect-from').value, to: byId('redirect-to').value, status: Number(byId('redirect-status').value) });
      form.reset();
      await load();
    });
  });
  byId('redirects-more').addEventListener('click', () => withButton(byId('redirects-more'), 'redirects-error', () => load(true)));
  try {
    await load();
  } catch (error) {
    say('redirects-error', error.message);
  }
  byId('page').hidden = false;
  markReady();
}

void start();
