// `/admin/media`: upload (drop or choose, progress per file), grid / list, filename search, alt text,
// focal point, replace, "used in" and a delete that names the entries using the item.
import { ApiError, api, byId, el, formatDate, markReady, requireUser, say, withButton } from './common.js';

let can = new Set();
let nextCursor = null;
let view = 'grid';
let current = null;

/** The file's address on this origin (the API answers the site's own origin, which may differ from the admin's). */
const localUrl = (item) => {
  const url = new URL(item.url, location.origin);
  return url.pathname + url.search;
};
const sizeText = (bytes) => (bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} kB` : `${(bytes / 1048576).toFixed(1)} MB`);
const isImage = (item) => item.mimeType.startsWith('image/') && item.mimeType !== 'image/svg+xml';

/**
 * One multipart POST with upload progress. `fetch` reports no upload progress without a streamed
 * body (which needs HTTP/2), so this is XMLHttpRequest; the browser sends `Origin` on it like on a fetch.
 */
function send(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', path);
    request.responseType = 'json';
    request.setRequestHeader('accept', 'application/json');
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(Math.round((event.loaded / event.total) * 100));
    });
    request.addEventListener('load', () => {
      const data = request.response;
      if (request.status >= 200 && request.status < 300) resolve(data);
      else reject(new ApiError(request.status, data && typeof data.error === 'string' ? data.error : `Upload failed (${request.status})`));
    });
    request.addEventListener('error', () => reject(new ApiError(0, 'The upload did not reach the server.')));
    const body = new FormData();
    body.append('file', file);
    request.send(body);
  });
}

/** Uploads the files one after the other, each with its own progress bar and outcome. */
async function uploadFiles(files) {
  const rows = [...files].map((file) => {
    const progress = el('progress', { max: 100, value: 0, 'aria-label': `Upload progress of ${file.name}` });
    const status = el('span', { className: 'muted' }, 'Waiting');
    const row = el('li', { dataset: { file: file.name } }, el('span', { className: 'upload-name' }, file.name), progress, status);
    byId('uploads').append(row);
    return { file, progress, status, row };
  });
  for (const { file, progress, status, row } of rows) {
    status.textContent = 'Uploading';
    try {
      const item = await send('/api/media', file, (percent) => {
        progress.value = percent;
      });
      progress.value = 100;
      status.textContent = 'Uploaded';
      status.className = 'status-succeeded';
      row.dataset.mediaId = item.id;
    } catch (error) {
      status.textContent = error instanceof ApiError ? error.message : 'Upload failed';
      status.className = 'status-failed';
    }
  }
  await loadMedia();
}

function gridItem(item) {
  const preview = isImage(item)
    ? el('img', { src: localUrl(item), alt: item.altText ?? '', loading: 'lazy' })
    : el('span', { className: 'file-type' }, item.mimeType);
  const open = el('button', { type: 'button', className: 'secondary', 'aria-label': `Details of ${item.filename}` }, 'Details');
  open.addEventListener('click', () => openDetails(item.id));
  return el(
    'li',
    { className: 'media-card', dataset: { mediaId: item.id } },
    el('div', { className: 'thumb' }, preview),
    el('span', { className: 'media-name' }, item.filename),
    open,
  );
}

function listRow(item) {
  const open = el('button', { type: 'button', className: 'secondary', 'aria-label': `Details of ${item.filename}` }, 'Details');
  open.addEventListener('click', () => openDetails(item.id));
  return el(
    'tr',
    { dataset: { mediaId: item.id } },
    el('td', {}, item.filename),
    el('td', {}, item.mimeType),
    el('td', {}, sizeText(item.size)),
    el('td', {}, item.altText ?? '—'),
    el('td', {}, formatDate(item.createdAt)),
    el('td', { className: 'actions' }, open),
  );
}

async function loadMedia(append = false) {
  const params = new URLSearchParams({ limit: '48' });
  const search = byId('media-search').value.trim();
  if (search) params.set('search', search);
  if (append && nextCursor) params.set('cursor', nextCursor);
  try {
    const { data, page } = await api('GET', `/api/media?${params}`);
    const cards = data.map(gridItem);
    const rows = data.map(listRow);
    if (append) {
      byId('media-grid').append(...cards);
      byId('media-rows').append(...rows);
    } else {
      byId('media-grid').replaceChildren(...cards);
      byId('media-rows').replaceChildren(...rows);
    }
    nextCursor = page.nextCursor;
    byId('media-more').hidden = !nextCursor;
    byId('media-empty').hidden = byId('media-rows').children.length > 0;
    say('library-error', '');
  } catch (error) {
    say('library-error', error instanceof ApiError ? error.message : 'The library could not be loaded.');
  }
}

function setView(next) {
  view = next;
  byId('view-grid').setAttribute('aria-pressed', String(view === 'grid'));
  byId('view-list').setAttribute('aria-pressed', String(view === 'list'));
  byId('media-grid').hidden = view !== 'grid';
  byId('media-table').hidden = view !== 'list';
}

/** Places the marker at the focal point shown in the fields (CSSOM, which the CSP allows). */
function showFocal() {
  const x = Number.parseFloat(byId('focal-x').value);
  const y = Number.parseFloat(byId('focal-y').value);
  const marker = byId('focal-marker');
  marker.hidden = !(Number.isFinite(x) && Number.isFinite(y));
  marker.style.left = `${x * 100}%`;
  marker.style.top = `${y * 100}%`;
}

// Two decimals: the fields step by 0.01, and a value off that step would block the form.
const round = (value) => Math.round(Math.min(1, Math.max(0, value)) * 100) / 100;

async function openDetails(id) {
  const item = await api('GET', `/api/media/${encodeURIComponent(id)}`);
  current = item;
  byId('details').hidden = false;
  say('details-title', item.filename);
  say('details-file', `${item.mimeType} · ${sizeText(item.size)}${item.width ? ` · ${item.width}×${item.height}` : ''}`);
  const image = isImage(item);
  byId('focal-frame').hidden = !image;
  byId('focal-help').hidden = !image || !can.has('media:upload');
  byId('focal-fields').hidden = !image;
  if (image) {
    byId('details-image').src = localUrl(item);
    byId('details-image').alt = item.altText ?? '';
  }
  byId('alt-text').value = item.altText ?? '';
  byId('focal-x').value = item.focalX ?? '';
  byId('focal-y').value = item.focalY ?? '';
  showFocal();
  for (const id of ['details-status', 'details-error', 'replace-status', 'replace-error', 'delete-error']) say(id, '');
  byId('replace-progress').hidden = true;
  byId('delete-confirm').hidden = true;
  await loadUsage();
  byId('details').scrollIntoView({ block: 'nearest' });
  byId('alt-text').focus();
}

let usage = { data: [], more: false };
async function loadUsage() {
  usage = { data: [], more: false };
  if (can.has('content:read')) usage = await api('GET', `/api/media/${encodeURIComponent(current.id)}/usage`);
  byId('usage').replaceChildren(...usage.data.map((entry) => el('li', {}, `${entry.title} (${entry.type}, ${entry.locale}, ${entry.status})`)));
  if (usage.more) byId('usage').append(el('li', { className: 'muted' }, 'and more entries'));
  byId('usage-none').hidden = !can.has('content:read') || usage.data.length > 0;
}

function wire() {
  const drop = byId('drop-zone');
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('dragging');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('dragging');
    if (event.dataTransfer?.files.length) void uploadFiles(event.dataTransfer.files);
  });
  byId('file-input').addEventListener('change', (event) => {
    const input = event.currentTarget;
    const files = [...input.files];
    input.value = '';
    if (files.length) void uploadFiles(files);
  });

  let timer = null;
  byId('media-search').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void loadMedia(), 250);
  });
  byId('view-grid').addEventListener('click', () => setView('grid'));
  byId('view-list').addEventListener('click', () => setView('list'));
  byId('media-more').addEventListener('click', () => loadMedia(true));

  byId('details-image').addEventListener('click', (event) => {
    if (!can.has('media:upload')) return;
    const box = event.currentTarget.getBoundingClientRect();
    byId('focal-x').value = String(round((event.clientX - box.left) / box.width));
    byId('focal-y').value = String(round((event.clientY - box.top) / box.height));
    showFocal();
  });
  byId('focal-x').addEventListener('input', showFocal);
  byId('focal-y').addEventListener('input', showFocal);

  byId('details-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('details-status', '');
    return withButton(byId('details-save'), 'details-error', async () => {
      const focal = (id) => (byId(id).value === '' ? null : Number(byId(id).value));
      const change = { altText: byId('alt-text').value.trim() || null };
      if (!byId('focal-fields').hidden) Object.assign(change, { focalX: focal('focal-x'), focalY: focal('focal-y') });
      current = await api('PATCH', `/api/media/${encodeURIComponent(current.id)}`, change);
      say('details-status', 'Saved.');
      await loadMedia();
    });
  });
  byId('details-close').addEventListener('click', () => {
    byId('details').hidden = true;
    current = null;
  });

  byId('replace-input').addEventListener('change', async (event) => {
    const input = event.currentTarget;
    const file = input.files[0];
    input.value = '';
    if (!file || !current) return;
    const progress = byId('replace-progress');
    progress.hidden = false;
    progress.value = 0;
    say('replace-error', '');
    say('replace-status', 'Uploading…');
    try {
      await send(`/api/media/${encodeURIComponent(current.id)}/file`, file, (percent) => {
        progress.value = percent;
      });
      progress.value = 100;
      await openDetails(current.id);
      say('replace-status', `Replaced with ${file.name}.`);
      await loadMedia();
    } catch (error) {
      say('replace-status', '');
      say('replace-error', error instanceof ApiError ? error.message : 'The file could not be replaced.');
    }
  });

  byId('delete').addEventListener('click', () =>
    withButton(byId('delete'), 'delete-error', async () => {
      await loadUsage();
      const names = usage.data.map((entry) => `“${entry.title}”`).join(', ');
      say(
        'delete-warning',
        usage.data.length
          ? `${current.filename} is used in ${usage.data.length}${usage.more ? '+' : ''} ${usage.data.length === 1 ? 'entry' : 'entries'}: ${names}. Deleting it breaks them there.`
          : `Delete ${current.filename}? It goes to the trash, from where it can be restored.`,
      );
      byId('delete-confirm').hidden = false;
      byId('delete-no').focus();
    }),
  );
  byId('delete-no').addEventListener('click', () => {
    byId('delete-confirm').hidden = true;
    byId('delete').focus();
  });
  byId('delete-yes').addEventListener('click', () =>
    withButton(byId('delete-yes'), 'delete-error', async () => {
      await api('DELETE', `/api/media/${encodeURIComponent(current.id)}`);
      byId('details').hidden = true;
      current = null;
      await loadMedia();
      byId('media-search').focus();
    }),
  );
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  can = new Set(user.capabilities);
  // Controls the role lacks are not shown (the API refuses them anyway).
  byId('upload-section').hidden = !can.has('media:upload');
  byId('replace-block').hidden = !can.has('media:upload');
  byId('details-save').hidden = !can.has('media:upload');
  byId('alt-text').readOnly = !can.has('media:upload');
  byId('focal-x').readOnly = !can.has('media:upload');
  byId('focal-y').readOnly = !can.has('media:upload');
  byId('delete-block').hidden = !can.has('media:delete');
  wire();
  await loadMedia();
  byId('page').hidden = false;
  markReady();
}

void start();
