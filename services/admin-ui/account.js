// `/admin/account`: two-factor sign-in (enrol: link, key and recovery codes shown once; switch
// off), the password, and the user's sessions with a button to end each or all others.
import { api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';

function showTwoFactor(user) {
  const { enabled, required, pending } = user.twoFactor;
  byId('twofactor-pending').hidden = !pending;
  say('twofactor-state', enabled ? 'On: signing in asks for a code from your app.' : required ? 'Off, and required for your account.' : 'Off.');
  byId('enrol-start').hidden = enabled;
  byId('remove-form').hidden = !enabled || required;
}

byId('enrol-start').addEventListener('click', (event) =>
  withButton(event.currentTarget, 'enrol-error', async () => {
    const enrolment = await api('POST', '/api/auth/totp/enroll');
    byId('enrol-url').value = enrolment.otpauthUrl;
    byId('enrol-secret').value = enrolment.secret;
    byId('recovery-codes').replaceChildren(...enrolment.recoveryCodes.map((code) => el('li', {}, el('code', {}, code))));
    byId('enrolment').hidden = false;
    byId('enrol-start').hidden = true;
    byId('enrol-code').focus();
  }),
);

byId('enrol-form').addEventListener('submit', (event) => {
  event.preventDefault();
  return withButton(event.currentTarget.querySelector('button[type=submit]'), 'enrol-error', async () => {
    await api('POST', '/api/auth/totp/confirm', { code: byId('enrol-code').value.trim() });
    // The seed and the codes leave the page once the app has them.
    byId('enrol-url').value = '';
    byId('enrol-secret').value = '';
    byId('recovery-codes').replaceChildren();
    byId('enrolment').hidden = true;
    await refresh();
  });
});

byId('remove-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  return withButton(form.querySelector('button[type=submit]'), 'remove-error', async () => {
    await api('POST', '/api/auth/totp/remove', { password: byId('remove-password').value, code: byId('remove-code').value.trim() });
    form.reset();
    await refresh();
  });
});

byId('password-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  say('password-status', '');
  return withButton(form.querySelector('button[type=submit]'), 'password-error', async () => {
    await api('POST', '/api/auth/password', { currentPassword: byId('password-current').value, password: byId('password-new').value });
    form.reset();
    say('password-status', 'Password changed. Your other sessions have ended.');
    await loadSessions();
  });
});

function sessionRow(session) {
  const label = session.current ? `${session.device} (this session)` : session.device;
  const end = el('button', { type: 'button', className: 'danger', 'aria-label': `End session ${label} from ${session.ip ?? 'unknown address'}` }, 'End');
  end.addEventListener('click', () =>
    withButton(end, 'sessions-error', async () => {
      await api('DELETE', `/api/auth/sessions/${encodeURIComponent(session.id)}`);
      if (session.current) location.assign('/admin');
      else await loadSessions();
    }),
  );
  return el(
    'tr',
    { dataset: { sessionId: session.id } },
    el('td', {}, label),
    el('td', {}, session.ip ?? '—'),
    el('td', {}, formatDate(session.createdAt)),
    el('td', {}, formatDate(session.lastSeenAt)),
    el('td', { className: 'actions' }, end),
  );
}

async function loadSessions() {
  const { data } = await api('GET', '/api/auth/sessions');
  byId('sessions').replaceChildren(...data.map(sessionRow));
}

byId('end-others').addEventListener('click', (event) =>
  withButton(event.currentTarget, 'sessions-error', async () => {
    const { ended } = await api('POST', '/api/auth/sessions/end-others');
    say('sessions-status', ended === 1 ? 'One other session ended.' : `${ended} other sessions ended.`);
    await loadSessions();
  }),
);

async function refresh() {
  const { user } = await api('GET', '/api/auth/me');
  showTwoFactor(user);
}

const user = await requireUser();
if (user) {
  byId('page').hidden = false;
  showTwoFactor(user);
  await loadSessions().catch((error) => say('sessions-error', error.message));
  markReady();
}
