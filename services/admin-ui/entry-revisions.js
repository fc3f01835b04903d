// The revisions panel of `/admin/entry`: the entry's saved versions newest first, a readable
// comparison of one with the current working revision, and restore (a write of that version's
// content over the current one, with `expectedVersion`, so it becomes a new revision itself).
import { api, ApiError, byId, el, formatDate, say } from './common.js';
import { renderDiff } from './entry-diff.js';

export function revisionsPanel({ entry, canRestore, restored }) {
  let nextCursor = null;
  const path = (suffix = '') => `/api/content/${encodeURIComponent(entry().id)}/revisions${suffix}`;

  const button = (label, subject, className, onClick) => {
    const node = el('button', { type: 'button', className, 'aria-label': `${label} version ${subject}` }, label);
    node.addEventListener('click', async () => {
      node.disabled = true;
      say('revisions-error', '');
      try {
        await onClick();
      } catch (error) {
        say('revisions-error', error instanceof ApiError ? error.message : 'Something went wrong. Try again.');
      } finally {
        node.disabled = false;
      }
    });
    return node;
  };

  async function compare(version) {
    const revision = await api('GET', path(`/${version}`));
    const current = entry();
    byId('diff-title').textContent = `Changes from version ${version} to the current version ${current.version}`;
    byId('diff').replaceChildren(...renderDiff(revision, current, { before: `version ${version}`, after: 'the current version' }));
    byId('diff-panel').hidden = false;
  }

  async function restore(version) {
    if (!confirm(`Restore version ${version}? Its title, slug, excerpt, blocks and fields replace the current ones (a new version).`)) return;
    const revision = await api('GET', path(`/${version}`));
    const current = entry();
    // Fields the old version did not have are removed (null), the others set to its values.
    const fields = Object.fromEntries(Object.keys(current.fields).map((key) => [key, null]));
    Object.assign(fields, revision.fields);
    const view = await api('PATCH', `/api/content/${encodeURIComponent(current.id)}`, {
      title: revision.title,
      slug: revision.slug,
      excerpt: revision.excerpt,
      blocks: revision.blocks,
      fields,
      expectedVersion: current.version,
    });
    byId('diff-panel').hidden = true;
    restored(view);
  }

  function row(revision) {
    const current = revision.version === entry().version;
    return el(
      'tr',
      { dataset: { version: String(revision.version) } },
      el('td', {}, current ? `${revision.version} (current)` : String(revision.version)),
      el('td', {}, formatDate(revision.createdAt), revision.note ? el('div', { className: 'muted small' }, revision.note) : null),
      el('td', {}, el('span', { className: `status-${revision.status}` }, revision.status)),
      el('td', {}, revision.title),
      el(
        'td',
        { className: 'actions' },
        current ? null : button('Show changes', revision.version, 'secondary', () => compare(revision.version)),
        current || !canRestore ? null : button('Restore', revision.version, 'secondary', () => restore(revision.version)),
      ),
    );
  }

  async function load(append) {
    const query = new URLSearchParams({ limit: '20' });
    if (append && nextCursor) query.set('cursor', nextCursor);
    const { data, page } = await api('GET', `${path()}?${query}`);
    const rows = data.map(row);
    if (append) byId('revisions').append(...rows);
    else byId('revisions').replaceChildren(...rows);
    nextCursor = page.nextCursor;
    byId('revisions-more').hidden = !nextCursor;
  }

  byId('revisions-more').addEventListener('click', () => load(true).catch((error) => say('revisions-error', error.message)));

  return {
    reload: () => load(false).catch((error) => say('revisions-error', error.message)),
  };
}
