// `/admin/trash`: the trashed entries, newest first, with Restore and (for those who may purge:
// `site:admin`) Purge after a confirmation. Media and menus have their own pages.
import { api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';
import { can } from './content-common.js';

let nextCursor = null;
let user = null;

function action(label, item, className, onClick) {
  const button = el('button', { type: 'button', className, 'aria-label': `${label} ${item.title}` }, label);
  button.addEventListener('click', () => withButton(button, 'trash-error', onClick));
  return button;
}

function row(item) {
  return el(
    'tr',
    { dataset: { entryId: item.id } },
    el('td', {}, item.title),
    el('td', {}, formatDate(item.trashedAt)),
    el(
      'td',
      { className: 'actions' },
      action('Restore', item, 'secondary', async () => {
        await api('POST', '/api/trash/restore', { kind: 'entry', id: item.id });
        say('trash-status', '');
        byId('trash-status').append(
          `Restored “${item.title}” as a draft: `,
          el('a', { href: `/admin/entry?id=${encodeURIComponent(item.id)}` }, 'open it'),
          '.',
        );
        await load(false);
      }),
      can(user, 'site:admin') &&
        action('Purge', item, 'danger', async () => {
          if (!confirm(`Purge “${item.title}” for good? Its revisions go with it; this cannot be undone.`)) return;
          await api('DELETE', `/api/trash?kind=entry&id=${encodeURIComponent(item.id)}`);
          say('trash-status', `Purged “${item.title}”.`);
          await load(false);
        }),
    ),
  );
}

async function load(append) {
  const query = new URLSearchParams({ kind: 'entry', limit: '50' });
  if (append && nextCursor) query.set('cursor', nextCursor);
  const { data, page } = await api('GET', `/api/trash?${query}`);
  const rows = data.map(row);
  if (append) byId('trash').append(...rows);
  else byId('trash').replaceChildren(...rows);
  nextCursor = page.nextCursor;
  byId('trash-more').hidden = !nextCursor;
  byId('trash-empty').hidden = byId('trash').childElementCount > 0;
}

byId('trash-more').addEventListener('click', (event) => withButton(event.currentTarget, 'trash-error', () => load(true)));

user = await requireUser();
if (user) {
  byId('page').hidden = false;
  if (new URLSearchParams(location.search).has('moved')) say('trash-status', 'Moved to the trash.');
  await load(false).catch((error) => say('trash-error', error.message));
  markReady();
}
