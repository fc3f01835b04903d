// `/admin/webhooks`: endpoints (signing secret shown once), rotate / delete, a paused endpoint's
// reason and its Resume button, and the delivery history with redelivery. The subscribable events come from the list answer's `eventTypes`.
import { api, byId, checkedValues, el, formatDate, markReady, renderChecks, requireUser, say, showSecret, withButton } from './common.js';

let nextCursor = null;
/** Endpoint id → name, so the history can name endpoints it lists by id. */
const endpointNames = new Map();

/** A row button; its accessible name says what it acts on. */
function action(label, subject, className, errorId, onClick) {
  const button = el('button', { type: 'button', className, 'aria-label': `${label} ${subject}` }, label);
  button.addEventListener('click', () => withButton(button, errorId, onClick));
  return button;
}

function endpointRow(endpoint) {
  return el(
    'tr',
    { dataset: { endpointId: endpoint.id } },
    el('td', {}, endpoint.name),
    el('td', {}, endpoint.url),
    el('td', { className: 'tags' }, endpoint.events.join(', ')),
    el('td', {}, endpoint.active ? 'yes' : 'no'),
    // The circuit breaker's pause: when and why, so the owner knows why nothing arrives.
    el(
      'td',
      {},
      endpoint.pausedAt
        ? el(
            'span',
            { className: 'status-paused', title: endpoint.pauseReason ?? '' },
            `paused since ${formatDate(endpoint.pausedAt)}: ${endpoint.pauseReason ?? ''}`,
          )
        : endpoint.withheldEvents.length
          ? el('span', { className: 'status-paused' }, `not receiving ${endpoint.withheldEvents.join(', ')}: its creator lost the right to read them`)
          : 'delivering',
    ),
    el(
      'td',
      { className: 'actions' },
      ...(endpoint.pausedAt
        ? [
            action('Resume', endpoint.name, 'secondary', 'endpoints-error', async () => {
              await api('POST', `/api/webhooks/${encodeURIComponent(endpoint.id)}/resume`);
              await loadEndpoints();
            }),
          ]
        : []),
      action('Rotate secret', endpoint.name, 'secondary', 'endpoints-error', async () => {
        if (!confirm(`Rotate the signing secret of "${endpoint.name}"? The old secret stops signing at once.`)) return;
        const { secret } = await api('POST', `/api/webhooks/${encodeURIComponent(endpoint.id)}/rotate-secret`);
        showSecret(endpoint.name, secret);
      }),
      action('Delete', endpoint.name, 'danger', 'endpoints-error', async () => {
        if (!confirm(`Delete the endpoint "${endpoint.name}"?`)) return;
        await api('DELETE', `/api/webhooks/${encodeURIComponent(endpoint.id)}`);
        await loadEndpoints();
      }),
    ),
  );
}

/** First page (replace, and refresh the event choices) or the next page (append). */
async function loadEndpoints(append = false) {
  const query = append && nextCursor ? `?cursor=${encodeURIComponent(nextCursor)}` : '';
  const { data, page, eventTypes } = await api('GET', `/api/webhooks${query}`);
  if (!append) {
    const chosen = new Set(checkedValues(byId('events')));
    renderChecks(byId('events'), 'events', eventTypes, (event) => chosen.has(event));
    endpointNames.clear();
  }
  for (const endpoint of data) endpointNames.set(endpoint.id, endpoint.name);
  const rows = data.map(endpointRow);
  if (append) byId('endpoints').append(...rows);
  else byId('endpoints').replaceChildren(...rows);
  nextCursor = page.nextCursor;
  byId('endpoints-more').hidden = !nextCursor;
  byId('endpoints-empty').hidden = byId('endpoints').childElementCount > 0;
}

byId('endpoints-more').addEventListener('click', (event) => withButton(event.currentTarget, 'endpoints-error', () => loadEndpoints(true)));

byId('create-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const events = checkedValues(byId('events'));
  if (events.length === 0) return say('create-error', 'Choose at least one event.');
  return withButton(form.querySelector('button[type=submit]'), 'create-error', async () => {
    const name = byId('endpoint-name').value;
    const body = { name, url: byId('endpoint-url').value, events, active: byId('endpoint-active').checked };
    const { secret } = await api('POST', '/api/webhooks', body);
    form.reset();
    showSecret(name, secret);
    await loadEndpoints();
  });
});

function historyRow(attempt) {
  return el(
    'tr',
    { dataset: { deliveryId: attempt.deliveryId } },
    el('td', {}, formatDate(attempt.startedAt)),
    el('td', {}, attempt.event),
    el('td', {}, endpointNames.get(attempt.endpointId) ?? attempt.endpointId),
    el('td', {}, attempt.status === 'paused' ? '—' : String(attempt.attempt)),
    el('td', {}, el('span', { className: `status-${attempt.status}` }, attempt.status)),
    el('td', {}, attempt.responseCode === null ? (attempt.error ?? '—') : String(attempt.responseCode)),
    el(
      'td',
      { className: 'actions' },
      action('Redeliver', `${attempt.event} delivery of ${formatDate(attempt.startedAt)}`, 'secondary', 'history-error', async () => {
        await api('POST', `/api/webhooks/deliveries/${encodeURIComponent(attempt.deliveryId)}/redeliver`);
        await loadHistory();
      }),
    ),
  );
}

async function loadHistory() {
  const { data } = await api('GET', '/api/webhooks/deliveries/history');
  byId('history').replaceChildren(...data.map(historyRow));
  byId('history-empty').hidden = data.length > 0;
}

byId('history-refresh').addEventListener('click', (event) => withButton(event.currentTarget, 'history-error', loadHistory));

if (await requireUser()) {
  byId('page').hidden = false;
  await loadEndpoints().catch((error) => say('endpoints-error', error.message));
  await loadHistory().catch((error) => say('history-error', error.message));
  markReady();
}
