// `/admin/platform`: the operator console. Workspaces with their status and usage against quotas
// (bars), create, suspend / reactivate, delete with confirmation, edit quotas and switches,
// backups with their progress: start, download, cancel, delete, restore; clone a workspace or a
// backup into a new workspace (the create form, with its source); the cluster each workspace's
// database is on, and moving it to another (docs/placement.md); the deleted ones with their purge
// date: undelete, purge now after a confirmation. Every call is a platform operation mounted on the
// cookie session under `/api/platform/…`.
import { ApiError, api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';

/** The documented quota names (docs/platform.md), used when the usage endpoint names none. */
const LIMITS = ['sites', 'users', 'entries', 'mediaBytes', 'mediaFileSize', 'apiKeys', 'webhookEndpoints', 'requestsPerMinute', 'exportRunsPerDay'];
const SWITCHES = ['graphql', 'mcp', 'webhooks', 'staticExport', 'plugins', 'comments'];
const base = '/api/platform/tenants';
const path = (id, rest = '') => `${base}/${encodeURIComponent(id)}${rest}`;
let deleting = null;
/** The deleted workspace the purge panel asks about. */
let purging = null;
let editing = null;
/** The workspace whose backups are shown; its list is read again every 2 s while one runs. */
let backingUp = null;
let backupTimer = null;
/** What the create form clones (`{ fromWorkspace }` or `{ fromBackup }` and a label), or null for an empty workspace. */
let cloning = null;
/** The workspace the create form last made, while its provisioning is under way: its status line follows the list. */
let provisioning = null;

/**
 * Every action starts by clearing the result lines of earlier ones, so no error or success line
 * outlives the next action (a failed delete's error after a later success, a "Saved." of a
 * workspace since deleted). The create line stays while it still follows a provisioning workspace.
 */
function clearLines() {
  for (const id of [
    'list-error',
    'delete-error',
    'quota-error',
    'quota-status',
    'backup-error',
    'backup-status',
    'deleted-error',
    'deleted-status',
    'purge-error',
  ]) {
    say(id, '');
  }
  if (!provisioning) say('create-status', '');
}

function run(button, errorId, onClick) {
  clearLines();
  return withButton(button, errorId, onClick);
}

function action(label, subject, className, onClick, errorId = 'list-error') {
  const button = el('button', { type: 'button', className, 'aria-label': `${label} ${subject}` }, label);
  button.addEventListener('click', () => run(button, errorId, onClick));
  return button;
}

const formatFigure = (name, value) =>
  value === null || value === undefined ? '—' : /Bytes|Size/.test(name) ? `${(value / 1048576).toFixed(1)} MiB` : String(value);

/** One bar per limited quota (a `<meter>`: no inline style, CSP-safe); unlimited ones as text. */
function usageCell(usage) {
  if (!usage) return el('td', { className: 'muted small' }, 'usage not available');
  const rows = Object.entries(usage.quotas ?? {})
    .filter(([, figure]) => figure.used !== null)
    .map(([name, figure]) =>
      el(
        'div',
        { className: 'usage' },
        el('span', { className: 'usage-name' }, name),
        figure.limit === null
          ? el('span', { className: 'muted small' }, `${formatFigure(name, figure.used)} (no limit)`)
          : [
              el('meter', {
                min: 0,
                max: figure.limit || 1,
                value: Math.min(figure.used, figure.limit),
                high: figure.limit * 0.8,
                optimum: 0,
                'aria-label': `${name} used`,
              }),
              el('span', { className: 'small' }, `${formatFigure(name, figure.used)} / ${formatFigure(name, figure.limit)}`),
            ],
      ),
    );
  return el('td', {}, rows);
}

async function usageOf(tenant) {
  if (tenant.status !== 'active' && tenant.status !== 'suspended') return null;
  try {
    return await api('GET', path(tenant.id, '/usage'));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

function row(tenant, usage) {
  const actions = [];
  if (tenant.status === 'active') {
    actions.push(
      action('Suspend', tenant.name, 'secondary', async () => {
        await api('POST', path(tenant.id, '/suspend'));
        await load();
      }),
    );
  }
  if (tenant.status === 'suspended') {
    actions.push(
      action('Reactivate', tenant.name, 'secondary', async () => {
        await api('POST', path(tenant.id, '/reactivate'));
        await load();
      }),
    );
  }
  if (tenant.status === 'active' || tenant.status === 'suspended') {
    actions.push(action('Quotas', tenant.name, 'secondary', () => openQuotas(tenant, usage)));
    actions.push(action('Backups', tenant.name, 'secondary', () => openBackups(tenant)));
    actions.push(action('Clone', tenant.name, 'secondary', async () => openClone({ fromWorkspace: tenant.id }, `"${tenant.name}" as it is now`)));
  }
  if ((tenant.status === 'active' || tenant.status === 'suspended') && !tenant.moving) {
    actions.push(action('Move', tenant.name, 'secondary', () => moveTenant(tenant)));
  }
  if (tenant.status !== 'deleted') actions.push(action('Delete', tenant.name, 'danger', async () => openDelete(tenant)));
  return el(
    'tr',
    { dataset: { tenantId: tenant.id } },
    el('td', {}, tenant.name, el('div', { className: 'muted small' }, tenant.id)),
    el(
      'td',
      { className: `status-${tenant.status}` },
      tenant.status,
      tenant.databaseDropped ? el('div', { className: 'muted small' }, 'database dropped') : null,
      el('div', { className: 'muted small' }, `cluster: ${tenant.cluster}`),
      tenant.moving ? el('div', { className: 'small' }, `moving to ${tenant.moving.to}…`) : null,
    ),
    usageCell(usage),
    el('td', { className: 'actions' }, actions),
  );
}

/** What is left of a deleted workspace: its purge date, why a due purge waits, or when it was purged. */
function deletedData(tenant) {
  if (tenant.purgedAt || tenant.databaseDropped) return tenant.purgedAt ? `purged ${formatDate(tenant.purgedAt)}` : 'purged';
  if (tenant.purgeHeld) return `purge held: ${tenant.purgeHeld}`;
  return tenant.purgeAt ? `kept, purge on ${formatDate(tenant.purgeAt)}` : 'kept until purged';
}

function deletedRow(tenant) {
  const actions = [];
  if (!tenant.purgedAt && !tenant.databaseDropped) {
    actions.push(
      action(
        'Undelete',
        tenant.name,
        'secondary',
        async () => {
          const answer = await api('POST', path(tenant.id, '/undelete'));
          const left = answer.domainsNotRestored.length ? ` Not restored (taken by another site): ${answer.domainsNotRestored.join(', ')}.` : '';
          say('deleted-status', `Workspace "${answer.tenant.name}" is ${answer.tenant.status}.${left}`);
          await load();
        },
        'deleted-error',
      ),
    );
    actions.push(action('Purge now', tenant.name, 'danger', async () => openPurge(tenant), 'deleted-error'));
  }
  return el(
    'tr',
    { dataset: { tenantId: tenant.id } },
    el('td', {}, tenant.name, el('div', { className: 'muted small' }, tenant.id)),
    el('td', {}, deletedData(tenant), tenant.finalBackupId ? el('div', { className: 'muted small' }, `final backup ${tenant.finalBackupId}`) : null),
    el('td', { className: 'actions' }, actions),
  );
}

function openPurge(tenant) {
  purging = tenant;
  say('purge-name', tenant.name);
  say('purge-error', '');
  byId('purge-panel').hidden = false;
  byId('purge-cancel').focus();
}

/** Asks which cluster (GET /clusters names them), then starts the move; the list follows it until it ends. */
async function moveTenant(tenant) {
  const { clusters } = await api('GET', '/api/platform/clusters');
  const others = clusters.filter((c) => c.label !== tenant.cluster).map((c) => `${c.label} (${c.workspaces})`);
  if (others.length === 0) throw new Error('There is no other cluster (MONGODB_CLUSTERS).');
  const cluster = window.prompt(`Move "${tenant.name}" from ${tenant.cluster} to which cluster? ${others.join(', ')}`)?.trim();
  if (!cluster) return;
  await api('POST', path(tenant.id, '/move'), { cluster });
  await load();
}

async function load() {
  const [{ data: all }, { data: deleted }] = await Promise.all([api('GET', base), api('GET', `${base}?status=deleted&limit=200`)]);
  const data = all.filter((tenant) => tenant.status !== 'deleted');
  const usages = await Promise.all(data.map(usageOf));
  byId('workspaces').replaceChildren(...data.map((tenant, i) => row(tenant, usages[i])));
  byId('deleted').replaceChildren(...deleted.map(deletedRow));
  if (provisioning) {
    // The create line tells the status as it is now, and stops following once provisioning ended.
    const current = data.find((t) => t.id === provisioning.id);
    if (current) say('create-status', `Workspace "${current.name}" is ${current.status}.`);
    if (!current || current.status !== 'provisioning') provisioning = null;
  }
  // A panel of a workspace that is gone (deleted) closes.
  const gone = (tenant) => tenant && !all.some((t) => t.id === tenant.id && t.status !== 'deleting' && t.status !== 'deleted');
  if (gone(editing)) {
    byId('quota-panel').hidden = true;
    editing = null;
  }
  if (gone(backingUp)) {
    clearTimeout(backupTimer);
    byId('backup-panel').hidden = true;
    backingUp = null;
  }
  if (gone(deleting)) {
    byId('delete-panel').hidden = true;
    deleting = null;
  }
  // The purge panel closes once its workspace is purged or back.
  if (purging && !deleted.some((t) => t.id === purging.id && !t.purgedAt && !t.databaseDropped)) {
    byId('purge-panel').hidden = true;
    purging = null;
  }
  // Steps still under way (`provisioning`, `deleting`, a move) are shown as such; look again shortly.
  if (data.some((t) => t.status === 'provisioning' || t.status === 'deleting' || t.moving)) setTimeout(() => load().catch(() => undefined), 2000);
}

/** The create form makes a clone of `source` from now on (docs/backups.md, "Clone"): new domains and administrator, no keys of the source. */
function openClone(source, label) {
  cloning = source;
  say('create-source-name', `Clone of ${label}: new domains and administrator; keys, sessions and grants are not copied, webhooks paused.`);
  byId('create-source').hidden = false;
  byId('create-form').scrollIntoView({ block: 'nearest' });
  byId('ws-name').focus();
}

function closeClone() {
  cloning = null;
  byId('create-source').hidden = true;
}

function openDelete(tenant) {
  deleting = tenant;
  say('delete-name', tenant.name);
  say('delete-error', '');
  byId('delete-confirm').value = '';
  byId('delete-drop').checked = false;
  byId('delete-final-backup').checked = false;
  byId('delete-panel').hidden = false;
  byId('delete-confirm').focus();
}

const mib = (bytes) => `${(bytes / 1048576).toFixed(1)} MiB`;

function backupProgress(backup) {
  const p = backup.progress;
  const text = `${p.collectionsDone}/${p.collections} collections, ${p.documents} documents, ${p.mediaFilesDone}/${p.mediaFiles} media files, ${mib(p.bytes)}`;
  const total = p.collections + p.mediaFiles;
  const bar =
    backup.state === 'running' && total > 0
      ? el('meter', { min: 0, max: total, value: p.collectionsDone + p.mediaFilesDone, 'aria-label': 'backup progress' })
      : null;
  return el('td', { className: 'small' }, bar, el('div', {}, text), backup.error ? el('div', { className: 'error' }, backup.error) : null);
}

function backupRow(tenant, backup) {
  const subject = `backup of ${formatDate(backup.createdAt)}`;
  const button = (label, className, onClick) => {
    const b = el('button', { type: 'button', className, 'aria-label': `${label} ${subject}` }, label);
    b.addEventListener('click', () => run(b, 'backup-error', onClick));
    return b;
  };
  const actions = [];
  if (backup.state === 'running') {
    actions.push(button('Cancel', 'secondary', () => api('POST', path(tenant.id, `/backups/${encodeURIComponent(backup.id)}/cancel`)).then(loadBackups)));
  }
  if (backup.state === 'succeeded') {
    actions.push(el('a', { href: path(tenant.id, `/backups/${encodeURIComponent(backup.id)}/download`), download: '' }, 'Download'));
    actions.push(
      button('Restore', 'danger', async () => {
        if (!window.confirm(`Restore "${tenant.name}" to its ${subject}? The workspace is suspended meanwhile and every change since is lost.`)) return;
        const { restore } = await api('POST', path(tenant.id, '/restore'), { backupId: backup.id });
        say('backup-status', `Restore ${restore.state}: the workspace comes back when it is done.`);
        await load();
      }),
    );
    actions.push(button('Clone', 'secondary', async () => openClone({ fromBackup: backup.id }, `"${tenant.name}", ${subject}`)));
  }
  if (backup.state !== 'running') {
    actions.push(button('Delete', 'secondary', () => api('DELETE', path(tenant.id, `/backups/${encodeURIComponent(backup.id)}`)).then(loadBackups)));
  }
  return el(
    'tr',
    { dataset: { backupId: backup.id } },
    el('td', {}, formatDate(backup.createdAt)),
    el('td', {}, backup.trigger),
    el('td', { className: `status-${backup.state}` }, backup.state),
    backupProgress(backup),
    el('td', {}, backup.size === null ? '—' : mib(backup.size)),
    el('td', { className: 'actions' }, actions),
  );
}

/** The newest backups first (the list pages oldest first: every page is read, 200 at a time). */
async function loadBackups() {
  clearTimeout(backupTimer);
  const tenant = backingUp;
  if (!tenant) return;
  const all = [];
  let cursor = null;
  do {
    const page = await api('GET', path(tenant.id, `/backups?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    all.push(...page.data);
    cursor = page.page.nextCursor;
  } while (cursor);
  if (backingUp !== tenant) return;
  byId('backups').replaceChildren(...all.reverse().map((backup) => backupRow(tenant, backup)));
  if (all.some((backup) => backup.state === 'running')) backupTimer = setTimeout(() => loadBackups().catch(() => undefined), 2000);
}

async function openBackups(tenant) {
  backingUp = tenant;
  say('backup-name', tenant.name);
  byId('backups').replaceChildren();
  byId('backup-panel').hidden = false;
  await loadBackups();
  byId('backup-panel').scrollIntoView({ block: 'nearest' });
}

async function openQuotas(tenant, usage) {
  editing = tenant;
  const { quotas } = await api('GET', path(tenant.id, '/quotas'));
  // Not edited here (set through the API, docs/backups.md): carried over so a save keeps it.
  editing.backupSchedule = quotas.backupSchedule ?? null;
  say('quota-name', tenant.name);
  say('quota-error', '');
  say('quota-status', '');
  const limits = usage ? Object.keys(usage.quotas ?? {}) : LIMITS;
  const switches = usage?.switches ? Object.keys(usage.switches) : SWITCHES;
  byId('quota-limits').replaceChildren(
    ...limits.map((name) =>
      el(
        'label',
        { className: 'stack' },
        name,
        el('input', { type: 'number', min: 0, step: 1, name, value: typeof quotas[name] === 'number' ? String(quotas[name]) : '', dataset: { quota: name } }),
      ),
    ),
  );
  byId('quota-switches').replaceChildren(
    ...switches.map((name) =>
      el('label', { className: 'check' }, el('input', { type: 'checkbox', name, checked: quotas[name] !== false, dataset: { switch: name } }), name),
    ),
  );
  byId('quota-panel').hidden = false;
  byId('quota-panel').scrollIntoView({ block: 'nearest' });
}

async function main() {
  const user = await requireUser();
  if (!user) return;
  byId('loading').hidden = true;
  if (!user.platformOperator) {
    byId('not-operator').hidden = false;
    markReady();
    return;
  }
  byId('console').hidden = false;

  byId('create-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const button = form.querySelector('button[type=submit]');
    provisioning = null;
    run(button, 'create-error', async () => {
      const body = {
        name: byId('ws-name').value,
        domains: byId('ws-domains')
          .value.split(',')
          .map((d) => d.trim())
          .filter(Boolean),
        admin: { email: byId('ws-admin-email').value, password: byId('ws-admin-password').value },
        ...cloning,
      };
      const { tenant } = await api('POST', base, body);
      byId('ws-admin-password').value = '';
      form.reset();
      closeClone();
      say('create-status', `Workspace "${tenant.name}" is ${tenant.status}.`);
      if (tenant.status === 'provisioning') provisioning = { id: tenant.id };
      await load();
    });
  });

  byId('create-source-clear').addEventListener('click', closeClone);

  byId('delete-cancel').addEventListener('click', () => {
    byId('delete-panel').hidden = true;
    say('delete-error', '');
    deleting = null;
  });
  // Typing again answers the error it caused: the line goes rather than stand next to a corrected name.
  byId('delete-confirm').addEventListener('input', () => say('delete-error', ''));
  byId('delete-form').addEventListener('submit', (event) => {
    event.preventDefault();
    run(byId('delete-submit'), 'delete-error', async () => {
      if (!deleting) return;
      if (byId('delete-confirm').value !== deleting.name) throw new ApiError(400, 'Type the exact workspace name to confirm.');
      const drop = byId('delete-drop').checked ? 'true' : 'false';
      const finalBackup = byId('delete-final-backup').checked ? 'true' : 'false';
      const { id } = deleting;
      await api('DELETE', `${path(id)}?dropDatabase=${drop}&finalBackup=${finalBackup}`);
      byId('delete-panel').hidden = true;
      deleting = null;
      if (editing?.id === id) {
        byId('quota-panel').hidden = true;
        editing = null;
      }
      await load();
    });
  });

  byId('purge-cancel').addEventListener('click', () => {
    byId('purge-panel').hidden = true;
    say('purge-error', '');
    purging = null;
  });
  // The explicit confirmation of a purge before its date: the deletion again, with `dropDatabase=true`.
  byId('purge-submit').addEventListener('click', () =>
    run(byId('purge-submit'), 'purge-error', async () => {
      if (!purging) return;
      const { tenant } = await api('DELETE', `${path(purging.id)}?dropDatabase=true`);
      byId('purge-panel').hidden = true;
      purging = null;
      say('deleted-status', `Workspace "${tenant.name}" is ${tenant.purgedAt ? 'purged' : 'being purged'}.`);
      await load();
    }),
  );

  byId('quota-close').addEventListener('click', () => {
    byId('quota-panel').hidden = true;
    say('quota-status', '');
    say('quota-error', '');
    editing = null;
  });
  byId('quota-form').addEventListener('submit', (event) => {
    event.preventDefault();
    run(byId('quota-save'), 'quota-error', async () => {
      if (!editing) return;
      const quotas = {};
      for (const input of byId('quota-limits').querySelectorAll('input[data-quota]')) {
        if (input.value !== '') quotas[input.dataset.quota] = Number(input.value);
      }
      for (const box of byId('quota-switches').querySelectorAll('input[data-switch]')) quotas[box.dataset.switch] = box.checked;
      if (editing.backupSchedule) quotas.backupSchedule = editing.backupSchedule;
      await api('PUT', path(editing.id, '/quotas'), { quotas });
      say('quota-status', 'Saved.');
      await load();
    });
  });

  byId('backup-close').addEventListener('click', () => {
    clearTimeout(backupTimer);
    byId('backup-panel').hidden = true;
    backingUp = null;
  });
  byId('backup-start').addEventListener('click', () =>
    run(byId('backup-start'), 'backup-error', async () => {
      if (!backingUp) return;
      await api('POST', path(backingUp.id, '/backups'));
      say('backup-status', 'Backup started.');
      await loadBackups();
    }),
  );

  await load();
  markReady();
}

main().catch(() => {
  say('list-error', 'The console could not load. Reload the page.');
  markReady();
});
