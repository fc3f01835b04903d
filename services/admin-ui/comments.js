// `/admin/comments`: moderation by status (pending first); approve, mark as spam, move to the trash.
import { api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';

let nextCursor = null;

const ACTIONS = [
  ['Approve', 'approved', ''],
  ['Spam', 'spam', 'secondary'],
  ['Trash', 'trash', 'danger'],
];

function row(comment) {
  const buttons = ACTIONS.filter(([, status]) => status !== comment.status).map(([label, status, className]) => {
    const button = el('button', { type: 'button', className, 'aria-label': `${label}: comment by ${comment.authorName}` }, label);
    button.addEventListener('click', () =>
      withButton(button, 'comments-error', async () => {
        await api('PATCH', '/api/comments', { ids: [comment.id], status });
        await load();
      }),
    );
    return button;
  });
  return el(
    'tr',
    { dataset: { commentId: comment.id } },
    el('td', {}, comment.authorName, comment.authorEmail ? el('div', { className: 'muted small' }, comment.authorEmail) : null),
    el('td', {}, comment.body),
    el('td', { className: 'muted small' }, comment.entryId),
    el('td', {}, formatDate(comment.createdAt)),
    el('td', { className: 'actions' }, ...buttons),
  );
}

async function load(append = false) {
  const params = new URLSearchParams({ status: byId('comment-status').value, limit: '50' });
  if (append && nextCursor) params.set('cursor', nextCursor);
  const { data, page } = await api('GET', `/api/comments?${params}`);
  if (append) byId('comments').append(...data.map(row));
  else byId('comments').replaceChildren(...data.map(row));
  nextCursor = page.nextCursor;
  byId('comments-more').hidden = !nextCursor;
  byId('comments-empty').hidden = byId('comments').children.length > 0;
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  byId('comment-status').addEventListener('change', () => load().catch((error) => say('comments-error', error.message)));
  byId('comments-more').addEventListener('click', () => withButton(byId('comments-more'), 'comments-error', () => load(true)));
  try {
    await load();
  } catch (error) {
    // Without comments:moderate the list is refused: the page says so and offers nothing.
    say('comments-error', error.message);
  }
  byId('page').hidden = false;
  markReady();
}

void start();
