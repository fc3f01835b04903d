// The block editor of `/admin/entry`: one form per block for every block type the site renders
// (services/export/blocks.ts BLOCK_TYPES), add / move / remove with buttons or Alt+↑ / Alt+↓, and
// a media control (pick from the library or upload) for the blocks that show a file.
import { api, ApiError, el } from './common.js';

/**
 * Block type → its editable fields. Kinds: `line` (input), `text` (textarea), `number`, `check`,
 * `lines` (one string per line), `media` (library item), `mediaList` (one item id per line),
 * `cells` (rows of `a | b` cells), `links` (`label | url` per line) and `json` for nested blocks.
 * Keys a block holds that are not listed here are kept as they are.
 */
export const BLOCK_FIELDS = {
  paragraph: [{ name: 'text', label: 'Text', kind: 'text' }],
  heading: [
    { name: 'text', label: 'Heading text', kind: 'line' },
    { name: 'level', label: 'Level (2–6)', kind: 'number', min: 2, max: 6 },
  ],
  list: [
    { name: 'items', label: 'Items (one per line)', kind: 'lines' },
    { name: 'ordered', label: 'Numbered', kind: 'check' },
  ],
  quote: [
    { name: 'text', label: 'Quote', kind: 'text' },
    { name: 'cite', label: 'Source', kind: 'line' },
  ],
  code: [
    { name: 'text', label: 'Code', kind: 'text', code: true },
    { name: 'language', label: 'Language', kind: 'line' },
  ],
  preformatted: [{ name: 'text', label: 'Preformatted text', kind: 'text', code: true }],
  html: [{ name: 'html', label: 'HTML (shown as text on the site)', kind: 'text', code: true }],
  image: [
    { name: 'mediaId', label: 'Image', kind: 'media', accept: 'image' },
    { name: 'alt', label: 'Alternative text', kind: 'line' },
    { name: 'caption', label: 'Caption', kind: 'line' },
  ],
  gallery: [{ name: 'images', label: 'Image ids (one per line)', kind: 'mediaList' }],
  video: [
    { name: 'mediaId', label: 'Video', kind: 'media', accept: 'video' },
    { name: 'caption', label: 'Caption', kind: 'line' },
  ],
  audio: [
    { name: 'mediaId', label: 'Audio', kind: 'media', accept: 'audio' },
    { name: 'caption', label: 'Caption', kind: 'line' },
  ],
  file: [
    { name: 'mediaId', label: 'File', kind: 'media', accept: '' },
    { name: 'name', label: 'Link text', kind: 'line' },
  ],
  embed: [
    { name: 'url', label: 'Address (URL)', kind: 'line', type: 'url' },
    { name: 'title', label: 'Title', kind: 'line' },
    { name: 'caption', label: 'Caption', kind: 'line' },
  ],
  table: [
    { name: 'head', label: 'Header cells (separated by |)', kind: 'cellsRow' },
    { name: 'rows', label: 'Rows (one per line, cells separated by |)', kind: 'cells' },
  ],
  separator: [],
  spacer: [{ name: 'height', label: 'Height in pixels', kind: 'number', min: 0, max: 400 }],
  button: [
    { name: 'text', label: 'Button text', kind: 'line' },
    { name: 'url', label: 'Link (URL or site path)', kind: 'line' },
  ],
  buttons: [{ name: 'buttons', label: 'Buttons (one per line: text | link)', kind: 'links' }],
  columns: [{ name: 'columns', label: 'Columns (JSON: [{ "blocks": [...] }, ...])', kind: 'json' }],
  group: [{ name: 'blocks', label: 'Blocks (JSON array)', kind: 'json' }],
  reusable: [{ name: 'ref', label: 'Reusable block name', kind: 'line' }],
};

export const BLOCK_TYPES = Object.keys(BLOCK_FIELDS);
const TYPE_LABELS = { html: 'HTML', preformatted: 'Preformatted text', reusable: 'Reusable block' };
export const typeLabel = (type) => TYPE_LABELS[type] ?? type.charAt(0).toUpperCase() + type.slice(1);

/** A field's value: on the block, or under `data` (both are read by the renderer). */
const read = (block, name) => block[name] ?? block.data?.[name];

const splitCells = (line) => line.split('|').map((cell) => cell.trim());

/** Field value → the text shown in its control. */
function toControl(field, value) {
  switch (field.kind) {
    case 'lines':
      return Array.isArray(value) ? value.map((item) => (typeof item === 'object' && item ? (item.text ?? '') : String(item))).join('\n') : '';
    case 'mediaList':
      return Array.isArray(value) ? value.map((image) => image?.mediaId ?? image?.url ?? '').join('\n') : '';
    case 'cellsRow':
      return Array.isArray(value) ? value.join(' | ') : '';
    case 'cells':
      return Array.isArray(value) ? value.map((row) => (Array.isArray(row) ? row.join(' | ') : '')).join('\n') : '';
    case 'links':
      return Array.isArray(value) ? value.map((b) => `${b?.text ?? ''} | ${b?.url ?? ''}`).join('\n') : '';
    case 'json':
      return value === undefined ? '[]' : JSON.stringify(value, null, 2);
    default:
      return value ?? '';
  }
}

/** Control text → the field value, or undefined to drop the key. Throws on bad JSON. */
function fromControl(field, control) {
  const text = control.value;
  const lines = () => text.split('\n').filter((line) => line.trim() !== '');
  switch (field.kind) {
    case 'check':
      return control.checked;
    case 'number':
      return text === '' ? undefined : Number(text);
    case 'lines':
      return lines();
    case 'mediaList':
      return lines().map((id) => ({ mediaId: id.trim() }));
    case 'cellsRow':
      return text.trim() ? splitCells(text) : undefined;
    case 'cells':
      return lines().map(splitCells);
    case 'links':
      return lines().map((line) => {
        const [label, url] = splitCells(line);
        return { text: label ?? '', url: url ?? '' };
      });
    case 'json':
      return JSON.parse(text || '[]');
    default:
      return text === '' ? undefined : text;
  }
}

/**
 * The block list: `blocks` is the document's array (edited in place); `onChange` runs after every
 * change, `media` is the media control's helper (`mediaPicker` below).
 */
export function blockEditor(list, blocks, { onChange, media }) {
  function focusButton(index, label) {
    list.children[index]?.querySelector(`button[data-action="${label}"]`)?.focus();
  }

  function move(index, delta, label) {
    const target = index + delta;
    if (target < 0 || target >= blocks.length) return;
    const [block] = blocks.splice(index, 1);
    blocks.splice(target, 0, block);
    render();
    onChange();
    focusButton(target, label);
  }

  function blockItem(block, index) {
    const type = typeof block.type === 'string' ? block.type : 'paragraph';
    const name = `block ${index + 1} (${typeLabel(type)})`;
    const fields = BLOCK_FIELDS[type] ?? [{ name: 'text', label: 'Text', kind: 'text' }];
    const controls = fields.map((field) => fieldControl(block, field, index));
    const tool = (label, action, text, disabled = false) => {
      const button = el(
        'button',
        { type: 'button', className: 'secondary small-button', 'aria-label': `${label} ${name}`, disabled, dataset: { action } },
        text,
      );
      return button;
    };
    const up = tool('Move up', 'up', '↑', index === 0);
    const down = tool('Move down', 'down', '↓', index === blocks.length - 1);
    const remove = tool('Remove', 'remove', 'Remove');
    up.addEventListener('click', () => move(index, -1, 'up'));
    down.addEventListener('click', () => move(index, 1, 'down'));
    remove.addEventListener('click', () => {
      blocks.splice(index, 1);
      render();
      onChange();
      (list.children[Math.min(index, blocks.length - 1)]?.querySelector('button[data-action="remove"]') ?? document.getElementById('add-block'))?.focus();
    });
    const item = el(
      'li',
      { className: 'block', dataset: { blockType: type } },
      el('fieldset', {}, el('legend', {}, `${index + 1}. ${typeLabel(type)}`), el('div', { className: 'block-tools' }, up, down, remove), ...controls),
    );
    item.addEventListener('keydown', (event) => {
      if (!event.altKey || (event.key !== 'ArrowUp' && event.key !== 'ArrowDown')) return;
      event.preventDefault();
      move(index, event.key === 'ArrowUp' ? -1 : 1, event.key === 'ArrowUp' ? 'up' : 'down');
    });
    return item;
  }

  function fieldControl(block, field, index) {
    const id = `block-${index}-${field.name}`;
    const label = el('label', { htmlFor: id }, field.label);
    if (field.kind === 'media') return media.control(block, field, id, label, onChange);
    let control;
    if (field.kind === 'check') {
      control = el('input', { type: 'checkbox', id, checked: read(block, field.name) === true });
      return el('div', { className: 'check' }, control, label, listen(control));
    }
    if (['text', 'lines', 'mediaList', 'cells', 'links', 'json'].includes(field.kind)) {
      control = el('textarea', {
        id,
        rows: field.kind === 'json' ? 6 : 3,
        className: field.code || field.kind === 'json' ? 'code' : '',
        spellcheck: !field.code,
      });
    } else {
      control = el('input', { id, type: field.kind === 'number' ? 'number' : (field.type ?? 'text') });
      if (field.min !== undefined) control.min = String(field.min);
      if (field.max !== undefined) control.max = String(field.max);
    }
    control.value = toControl(field, read(block, field.name));
    const problem = el('span', { className: 'error small', role: 'alert' });
    return el('div', { className: 'stack wide' }, label, control, problem, listen(control, problem));

    function listen(input, problemNode) {
      input.addEventListener(field.kind === 'check' ? 'change' : 'input', () => {
        try {
          const value = fromControl(field, input);
          if (block.data && field.name in block.data) delete block.data[field.name];
          if (value === undefined) delete block[field.name];
          else block[field.name] = value;
          if (problemNode) problemNode.textContent = '';
          onChange();
        } catch {
          if (problemNode) problemNode.textContent = 'Not valid JSON yet: the last valid value is kept.';
        }
      });
      return null;
    }
  }

  function render() {
    list.replaceChildren(...blocks.map(blockItem));
  }

  return {
    render,
    add(type) {
      const block = { type };
      if (type === 'heading') block.level = 2;
      if (type === 'columns') block.columns = [{ blocks: [] }, { blocks: [] }];
      if (type === 'group') block.blocks = [];
      blocks.push(block);
      render();
      onChange();
      list.lastElementChild?.querySelector('input, textarea, select, button')?.focus();
    },
  };
}

/**
 * The media control of image, video, audio and file blocks: a select of the library's items of
 * that kind, and an upload input that sends the file through the media upload operation
 * (`POST /api/media`, multipart) and selects the new item. Shows a thumbnail for images.
 */
export function mediaPicker({ canUpload, onError }) {
  const cache = new Map();
  const libraryOf = (accept) => {
    if (!cache.has(accept)) {
      const query = new URLSearchParams({ limit: '100' });
      if (accept) query.set('type', accept);
      cache.set(
        accept,
        api('GET', `/api/media?${query}`).then(
          (answer) => answer.data,
          () => [],
        ),
      );
    }
    return cache.get(accept);
  };

  async function upload(file) {
    const body = new FormData();
    body.append('file', file);
    const response = await fetch('/api/media', { method: 'POST', body, credentials: 'same-origin', headers: { accept: 'application/json' } });
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, data?.error ?? `Upload failed (${response.status})`);
    cache.clear();
    return data;
  }

  const fileAddress = (item) => `/media/files/${encodeURIComponent(item.id)}/${encodeURIComponent(item.filename)}`;

  function control(block, field, id, label, onChange) {
    const select = el('select', { id }, el('option', { value: '' }, '— none —'));
    const thumb = el('img', { className: 'thumb', alt: '', hidden: true });
    const current = read(block, field.name);
    const show = (items) => {
      const chosen = block[field.name] ?? current ?? '';
      select.replaceChildren(el('option', { value: '' }, '— none —'), ...items.map((item) => el('option', { value: item.id }, item.filename)));
      if (chosen && !items.some((item) => item.id === chosen)) select.append(el('option', { value: chosen }, chosen));
      select.value = chosen;
      const item = items.find((i) => i.id === chosen);
      thumb.hidden = !(item && item.mimeType.startsWith('image/'));
      if (!thumb.hidden) thumb.src = fileAddress(item);
    };
    libraryOf(field.accept).then(show);
    select.addEventListener('change', () => {
      if (select.value) block[field.name] = select.value;
      else delete block[field.name];
      libraryOf(field.accept).then(show);
      onChange();
    });
    const parts = [label, el('div', { className: 'row' }, select, thumb)];
    if (canUpload) {
      const uploadId = `${id}-upload`;
      const input = el('input', { type: 'file', id: uploadId, accept: field.accept ? `${field.accept}/*` : '' });
      const status = el('span', { className: 'muted small', role: 'status' });
      input.addEventListener('change', async () => {
        const file = input.files?.[0];
        if (!file) return;
        status.textContent = `Uploading ${file.name}…`;
        try {
          const item = await upload(file);
          block[field.name] = item.id;
          status.textContent = `Uploaded ${item.filename}.`;
          libraryOf(field.accept).then(show);
          onChange();
        } catch (error) {
          status.textContent = '';
          onError(error instanceof ApiError ? error.message : 'The upload failed.');
        } finally {
          input.value = '';
        }
      });
      parts.push(el('label', { htmlFor: uploadId, className: 'small' }, `Upload a new ${field.label.toLowerCase()}`), input, status);
    }
    return el('div', { className: 'stack wide' }, ...parts);
  }

  return { control };
}
