// `/admin/api-keys`: the Management API switch, creating keys (secret shown once), and the
// key list with rotate / revoke / delete. The list never carries secrets (server-side rule).
import { api, byId, checkedValues, el, formatDate, markReady, renderChecks, requireUser, say, showSecret, withButton } from './common.js';

let nextCursor = null;

async function loadSettings() {
  const settings = await api('GET', '/api/api-keys/settings');
  byId('settings-enabled').checked = settings.enabled;
  byId('settings-rate').value = String(settings.defaultRateLimitPerMin);
  byId('settings-origins').value = settings.allowedOrigins.join('\n');
}

byId('settings-form').addEventListener('submit', (event) => {
  event.preventDefault();
  say('settings-status', '');
  const origins = byId('settings-origins')
    .value.split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return withButton(event.submitter ?? event.currentTarget.querySelector('button'), 'settings-error', async () => {
    await api('PUT', '/api/api-keys/settings', {
      enabled: byId('settings-enabled').checked,
      defaultRateLimitPerMin: Number(byId('settings-rate').value),
      allowedOrigins: origins,
    });
    await loadSettings();
    say('settings-status', byId('settings-enabled').checked ? 'Saved. The Management API is on.' : 'Saved. The Management API is off.');
  });
});

async function loadCapabilities() {
  const { capabilities } = await api('GET', '/api/api-keys/capabilities');
  renderChecks(byId('capabilities'), 'capabilities', capabilities);
}

byId('create-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const capabilities = checkedValues(byId('capabilities'));
  if (capabilities.length === 0) return say('create-error', 'Choose at least one capability.');
  return withButton(form.querySelector('button[type=submit]'), 'create-error', async () => {
    const { key, record } = await api('POST', '/api/api-keys', { name: byId('key-name').value, capabilities });
    form.reset();
    showSecret(record.name, key);
    await loadKeys();
  });
});

/** A row button; its accessible name says which key it acts on. */
function action(label, subject, className, onClick) {
  const button = el('button', { type: 'button', className, 'aria-label': `${label} ${subject}` }, label);
  button.addEventListener('click', () => withButton(button, 'keys-error', onClick));
  return button;
}

function keyRow(key) {
  const active = key.status === 'active';
  return el(
    'tr',
    { dataset: { keyId: key.id } },
    el('td', {}, key.name),
    el('td', { className: 'tags' }, key.capabilities.join(', ')),
    el('td', {}, el('span', { className: `status-${key.status}` }, key.status)),
    el('td', {}, formatDate(key.createdAt)),
    el(
      'td',
      { className: 'actions' },
      active &&
        action('Rotate', key.name, 'secondary', async () => {
          if (!confirm(`Rotate "${key.name}"? Its current secret stops working at once.`)) return;
          const issued = await api('POST', `/api/api-keys/${encodeURIComponent(key.id)}/rotate`);
          showSecret(issued.record.name, issued.key);
          await loadKeys();
        }),
      active &&
        action('Revoke', key.name, 'danger', async () => {
          if (!confirm(`Revoke "${key.name}"? Clients using it are cut off immediately.`)) return;
          await api('POST', `/api/api-keys/${encodeURIComponent(key.id)}/revoke`);
          await loadKeys();
        }),
      action('Delete', key.name, 'danger', async () => {
        if (!confirm(`Delete "${key.name}"? This cannot be undone.`)) return;
        await api('DELETE', `/api/api-keys/${encodeURIComponent(key.id)}`);
        await loadKeys();
      }),
    ),
  );
}

/** First page (replace) or the next page (append). */
async function loadKeys(append = false) {
  const query = append && nextCursor ? `?cursor=${encodeURIComponent(nextCursor)}` : '';
  const { data, page } = await api('GET', `/api/api-keys${query}`);
  const rows = data.map(keyRow);
  if (append) byId('keys').append(...rows);
  else byId('keys').replaceChildren(...rows);
  nextCursor = page.nextCursor;
  byId('keys-more').hidden = !nextCursor;
  byId('keys-empty').hidden = byId('keys').childElementCount > 0;
}

byId('keys-more').addEventListener('click', (event) => withButton(event.currentTarget, 'keys-error', () => loadKeys(true)));

if (await requireUser()) {
  byId('page').hidden = false;
  const report = (id) => (error) => say(id, error.message);
  await Promise.all([loadSettings().catch(report('settings-error')), loadCapabilities().catch(report('create-error')), loadKeys().catch(report('keys-error'))]);
  markReady();
}
