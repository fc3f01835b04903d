// `/admin/reset-password`: ask for a link by e-mail; with `?token=…` (the link), set the new password.
import { api, byId, markReady, say, withButton } from './common.js';

const token = new URLSearchParams(location.search).get('token');
if (token) history.replaceState(null, '', location.pathname);

byId('request-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  return withButton(form.querySelector('button[type=submit]'), 'request-error', async () => {
    await api('POST', '/api/auth/password-reset', { email: byId('request-email').value });
    form.hidden = true;
    say('reset-status', 'If this address has an account, a link is on its way. It works once, for one hour.');
  });
});

byId('confirm-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (byId('confirm-password').value !== byId('confirm-repeat').value) return say('confirm-error', 'The two passwords differ.');
  return withButton(form.querySelector('button[type=submit]'), 'confirm-error', async () => {
    await api('POST', '/api/auth/password-reset/confirm', { token, password: byId('confirm-password').value });
    form.hidden = true;
    say('reset-status', 'Your password is changed and every session of your account has ended. Sign in with the new password.');
    byId('reset-done').hidden = false;
  });
});

byId(token ? 'confirm-form' : 'request-form').hidden = false;
markReady();
