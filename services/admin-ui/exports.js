// `/admin/exports`: the static export of this site. Live progress (polled once a second while a
// run is going), run full or incremental, cancel, download the last good export, its history.
import { api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';

const POLL_RUNNING_MS = 1000;
const POLL_IDLE_MS = 5000;
let timer = null;
let lastRunId = null;

const PHASES = { planning: 'Planning', rendering: 'Rendering', finishing: 'Publishing the new export', cancelling: 'Cancelling' };

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return '';
  if (seconds < 60) return `about ${seconds} s left`;
  return `about ${Math.round(seconds / 60)} min left`;
}

function showStatus(status) {
  const bar = byId('run-progress');
  const { progress } = status;
  byId('run-cancel').disabled = status.status === 'idle';
  if (progress) {
    bar.hidden = false;
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done;
    say('run-state', `${PHASES[progress.phase] ?? progress.phase} (${progress.mode}): ${progress.done} of ${progress.total} entries`);
    const rate = progress.rate ? `${progress.rate} entries/s` : '';
    say(
      'run-figures',
      [
        rate,
        formatSeconds(progress.etaSeconds),
        progress.startedAt ? `started ${formatDate(progress.startedAt)}` : '',
        status.queued.length ? `next: ${status.queued.join(', ')}` : '',
      ]
        .filter(Boolean)
        .join(' · '),
    );
  } else {
    bar.hidden = true;
    say('run-state', status.status === 'idle' ? 'No run in progress.' : 'A run is starting…');
    const last = status.lastRun;
    say('run-figures', last ? `Last run ${last.status} ${formatDate(last.finishedAt)}${status.lastError ? ` — ${status.lastError}` : ''}` : '');
  }
  const { output } = status;
  byId('output-links').hidden = output.files === 0;
  say(
    'output-summary',
    output.files === 0
      ? 'Nothing exported yet.'
      : `${output.files} files, ${formatBytes(output.bytes)}; last successful run started ${formatDate(status.lastSuccessAt)}.`,
  );
}

function runRow(run) {
  return el(
    'tr',
    { dataset: { runId: run.runId } },
    el('td', {}, formatDate(run.finishedAt)),
    el('td', {}, run.mode),
    el('td', { className: `status-${run.status}` }, run.status),
    el('td', {}, String(run.rendered)),
    el('td', {}, String(run.written)),
    el('td', {}, String(run.removed)),
    el('td', {}, `${(run.durationMs / 1000).toFixed(1)} s`),
    el('td', { className: 'tags' }, run.error ?? ''),
  );
}

async function loadRuns() {
  const { data } = await api('GET', '/api/static-export/runs?limit=20');
  byId('runs').replaceChildren(...data.map(runRow));
  byId('runs-empty').hidden = data.length > 0;
}

async function refresh() {
  clearTimeout(timer);
  let busy = false;
  try {
    const status = await api('GET', '/api/static-export');
    showStatus(status);
    busy = status.status !== 'idle';
    // A finished run changes the history: reload it then (not on every poll).
    const runId = status.lastRun?.runId ?? null;
    if (runId !== lastRunId) {
      lastRunId = runId;
      await loadRuns();
    }
    say('history-error', '');
  } catch (error) {
    say('history-error', error.message);
  }
  timer = setTimeout(refresh, busy ? POLL_RUNNING_MS : POLL_IDLE_MS);
}

function start(mode) {
  return async () => {
    await api('POST', '/api/static-export/run', { mode });
    say('run-state', `A ${mode} run was requested.`);
    byId('run-cancel').disabled = false;
    setTimeout(refresh, 300);
  };
}

byId('run-full').addEventListener('click', (event) => withButton(event.currentTarget, 'run-error', start('full')));
byId('run-incremental').addEventListener('click', (event) => withButton(event.currentTarget, 'run-error', start('incremental')));
byId('run-cancel').addEventListener('click', (event) =>
  withButton(event.currentTarget, 'run-error', async () => {
    if (!confirm('Cancel the export run? The last good export stays as it is.')) return;
    await api('POST', '/api/static-export/cancel', { queued: true });
    say('run-state', 'Cancelling…');
    setTimeout(refresh, 300);
  }),
);

const user = await requireUser();
if (user) {
  byId('page').hidden = false;
  await refresh();
  await loadRuns();
  markReady();
}
