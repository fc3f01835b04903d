// `/admin/accept-invitation?token=…`: the invitee chooses a password; the link works once.
import { api, byId, markReady, say, withButton } from './common.js';

// Read once and taken out of the address bar, so the token is not left in history or shown on screen.
const token = new URLSearchParams(location.search).get('token') ?? '';
history.replaceState(null, '', location.pathname);

byId('accept-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (byId('accept-password').value !== byId('accept-repeat').value) return say('accept-error', 'The two passwords differ.');
  return withButton(form.querySelector('button[type=submit]'), 'accept-error', async () => {
    const name = byId('accept-name').value.trim();
    const user = await api('POST', '/api/auth/invitations/accept', { token, password: byId('accept-password').value, ...(name ? { name } : {}) });
    form.hidden = true;
    say('accept-status', `Your account ${user.email} is ready. Sign in with your new password.`);
    byId('accept-done').hidden = false;
  });
});

if (!token) say('accept-error', 'This page needs the link from your invitation e-mail.');
markReady();
