// `/admin`: the sign-in form, then the dashboard linking the other pages.
import { api, ApiError, byId, currentUser, markReady, say, showNav } from './common.js';

/**
 * `?next=` (set by the other admin pages and by `/oauth/authorize`) is followed after sign-in, but
 * only to a path on this origin, so the sign-in page cannot be used as an open redirect.
 */
function nextTarget() {
  const next = new URLSearchParams(location.search).get('next');
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return null;
  const url = new URL(next, location.origin);
  return url.origin === location.origin ? url.pathname + url.search : null;
}

function signedIn(user) {
  // An account that must switch two-factor sign-in on goes to its account page first.
  if (user.twoFactor?.pending) return location.assign('/admin/account');
  const next = nextTarget();
  if (next) location.assign(next);
  else showDashboard(user);
}

function showDashboard(user) {
  showNav(user);
  say('dashboard-user', user.email);
  say('dashboard-role', user.role);
  byId('sign-in').hidden = true;
  byId('dashboard').hidden = false;
  byId('card-platform').hidden = !user.platformOperator;
}

function showSignIn() {
  byId('dashboard').hidden = true;
  byId('sign-in').hidden = false;
  byId('email').focus();
}

byId('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const button = form.querySelector('button[type=submit]');
  button.disabled = true;
  say('sign-in-error', '');
  try {
    const code = byId('code').value.trim();
    const { user } = await api('POST', '/api/auth/login', { email: byId('email').value, password: byId('password').value, ...(code ? { code } : {}) });
    byId('password').value = '';
    byId('code').value = '';
    signedIn(user);
  } catch (error) {
    const status = error instanceof ApiError ? error.status : 0;
    say(
      'sign-in-error',
      status === 401 ? 'Wrong email, password or code.' : status === 429 ? 'Too many attempts. Wait a moment and try again.' : 'Sign-in failed. Try again.',
    );
  } finally {
    button.disabled = false;
  }
});

try {
  const user = await currentUser();
  if (user) signedIn(user);
  else showSignIn();
} catch {
  showSignIn();
  say('sign-in-error', 'The server could not be reached.');
} finally {
  byId('loading').hidden = true;
  markReady();
}
