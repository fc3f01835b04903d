// `/admin/users`: invite by e-mail and role, and the invitations with resend / revoke.
import { api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';

let nextCursor = null;

byId('invite-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  say('invite-status', '');
  return withButton(form.querySelector('button[type=submit]'), 'invite-error', async () => {
    const invitation = await api('POST', '/api/users/invitations', { email: byId('invite-email').value, role: byId('invite-role').value });
    form.reset();
    say('invite-status', `Invitation sent to ${invitation.email}.`);
    await loadInvitations();
  });
});

/** A row button; its accessible name says which invitation it acts on. */
function action(label, subject, className, onClick) {
  const button = el('button', { type: 'button', className, 'aria-label': `${label} invitation of ${subject}` }, label);
  button.addEventListener('click', () => withButton(button, 'invitations-error', onClick));
  return button;
}

function invitationRow(invitation) {
  const pending = invitation.state === 'pending' || invitation.state === 'expired';
  return el(
    'tr',
    { dataset: { invitationId: invitation.id } },
    el('td', {}, invitation.email),
    el('td', {}, invitation.role),
    el('td', {}, el('span', { className: `status-${invitation.state}` }, invitation.state)),
    el('td', {}, formatDate(invitation.expiresAt)),
    el('td', {}, String(invitation.sent)),
    el(
      'td',
      { className: 'actions' },
      pending &&
        action('Resend', invitation.email, 'secondary', async () => {
          await api('POST', `/api/users/invitations/${encodeURIComponent(invitation.id)}/resend`);
          await loadInvitations();
        }),
      invitation.state === 'pending' &&
        action('Revoke', invitation.email, 'danger', async () => {
          if (!confirm(`Revoke the invitation of ${invitation.email}? Its link stops working.`)) return;
          await api('DELETE', `/api/users/invitations/${encodeURIComponent(invitation.id)}`);
          await loadInvitations();
        }),
    ),
  );
}

async function loadInvitations(append = false) {
  const query = append && nextCursor ? `?cursor=${encodeURIComponent(nextCursor)}` : '';
  const { data, page } = await api('GET', `/api/users/invitations${query}`);
  const rows = data.map(invitationRow);
  if (append) byId('invitations').append(...rows);
  else byId('invitations').replaceChildren(...rows);
  nextCursor = page.nextCursor;
  byId('invitations-more').hidden = !nextCursor;
  byId('invitations-empty').hidden = byId('invitations').childElementCount > 0;
}

byId('invitations-more').addEventListener('click', (event) => withButton(event.currentTarget, 'invitations-error', () => loadInvitations(true)));

if (await requireUser()) {
  byId('page').hidden = false;
  await loadInvitations().catch((error) => say('invitations-error', error.message));
  markReady();
}
