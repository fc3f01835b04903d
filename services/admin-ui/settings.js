// `/admin/settings`: site title, sender address, two-factor rule and the Public API / comments
// switches, merged with `PATCH /api/settings` (only the keys shown here are sent).
import { api, byId, markReady, requireUser, say, withButton } from './common.js';

function show(settings) {
  byId('site-title').value = settings.title ?? '';
  byId('mail-from').value = settings.email?.from ?? '';
  byId('two-factor').value = settings.accounts?.twoFactor ?? 'optional';
  byId('public-enabled').checked = settings.api.publicEnabled;
  byId('comments-enabled').checked = settings.api.commentsEnabled;
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  const canManage = user.capabilities.includes('settings:manage');
  try {
    show(await api('GET', '/api/settings'));
  } catch (error) {
    say('settings-error', error.message);
  }
  // Without settings:manage the settings are shown read-only (the API refuses a change anyway).
  for (const field of byId('settings-form').querySelectorAll('input, select')) field.disabled = !canManage;
  byId('settings-save').hidden = !canManage;
  byId('settings-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('settings-status', '');
    return withButton(byId('settings-save'), 'settings-error', async () => {
      const text = (id) => byId(id).value.trim() || null;
      show(
        await api('PATCH', '/api/settings', {
          title: text('site-title'),
          email: { from: text('mail-from') },
          accounts: { twoFactor: byId('two-factor').value },
          api: { publicEnabled: byId('public-enabled').checked, commentsEnabled: byId('comments-enabled').checked },
        }),
      );
      say('settings-status', 'Saved.');
    });
  });
  byId('page').hidden = false;
  markReady();
}

void start();
