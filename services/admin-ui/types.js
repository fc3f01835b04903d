// `/admin/types`: content types and their fields; create a custom type, change its fields.
import { api, byId, el, markReady, requireUser, say, withButton } from './common.js';

/** The field kinds `contentTypes.create` accepts (FIELD_KINDS in services/content/model.ts; the API refuses any other). */
const KINDS = ['string', 'text', 'number', 'integer', 'boolean', 'date', 'url', 'select', 'list', 'object'];

let canManage = false;
/** The type being changed, or null when the form creates one. */
let editing = null;
let fieldCount = 0;

function fieldRow(field = { name: '', label: '', kind: 'string', required: false }) {
  const n = ++fieldCount;
  const input = (label, props) => {
    const id = `field-${n}-${label.toLowerCase().replace(/\W+/g, '-')}`;
    return [el('label', { htmlFor: id }, label), el('input', { id, ...props })];
  };
  const kindId = `field-${n}-kind`;
  const kind = el('select', { id: kindId, className: 'field-kind' }, ...KINDS.map((value) => el('option', { value, selected: value === field.kind }, value)));
  const [optionsLabel, options] = input('Options', { className: 'field-options', value: (field.options ?? []).join(', '), placeholder: 'a, b, c' });
  const showOptions = () => {
    optionsLabel.hidden = kind.value !== 'select';
    options.hidden = kind.value !== 'select';
  };
  kind.addEventListener('change', showOptions);
  const [nameLabel, name] = input('Field name', { className: 'field-name', value: field.name, required: true, maxLength: 64 });
  const [labelLabel, label] = input('Field label', { className: 'field-label', value: field.label ?? '', maxLength: 200 });
  const required = el('input', { type: 'checkbox', className: 'field-required', checked: field.required });
  const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Remove field ${n}` }, 'Remove');
  const row = el(
    'li',
    { className: 'row field-row' },
    nameLabel,
    name,
    labelLabel,
    label,
    el('label', { htmlFor: kindId }, 'Kind'),
    kind,
    optionsLabel,
    options,
    el('label', { className: 'check' }, required, 'Required'),
    remove,
  );
  remove.addEventListener('click', () => row.remove());
  showOptions();
  return row;
}

/** The fields as the operation takes them. */
function readFields() {
  return [...byId('fields').children].map((row) => {
    const kind = row.querySelector('.field-kind').value;
    const label = row.querySelector('.field-label').value.trim();
    const options = row
      .querySelector('.field-options')
      .value.split(',')
      .map((option) => option.trim())
      .filter(Boolean);
    return {
      name: row.querySelector('.field-name').value.trim(),
      ...(label ? { label } : {}),
      kind,
      required: row.querySelector('.field-required').checked,
      ...(kind === 'select' ? { options } : {}),
    };
  });
}

function openEditor(type) {
  editing = type;
  byId('type-editor').hidden = false;
  byId('type-form').reset();
  say('type-form-title', type ? `Change ${type.label}` : 'New content type');
  byId('type-slug').value = type?.slug ?? '';
  byId('type-slug').readOnly = Boolean(type);
  byId('type-label').value = type?.label ?? '';
  byId('fields').replaceChildren(...(type?.fields ?? []).map(fieldRow));
  say('type-status', '');
  say('type-error', '');
  byId(type ? 'type-label' : 'type-slug').focus();
}

async function load() {
  const { data } = await api('GET', '/api/content-types?limit=200');
  byId('types').replaceChildren(
    ...data.map((type) => {
      const actions = [];
      if (canManage && !type.builtin) {
        const change = el('button', { type: 'button', className: 'secondary', 'aria-label': `Change type ${type.label}` }, 'Change');
        change.addEventListener('click', () => openEditor(type));
        const remove = el('button', { type: 'button', className: 'danger', 'aria-label': `Delete type ${type.label}` }, 'Delete');
        remove.addEventListener('click', () =>
          withButton(remove, 'types-error', async () => {
            if (!confirm(`Delete the content type ${type.label}?`)) return;
            await api('DELETE', `/api/content-types/${encodeURIComponent(type.slug)}`);
            await load();
          }),
        );
        actions.push(change, remove);
      }
      return el(
        'tr',
        { dataset: { typeSlug: type.slug } },
        el('td', {}, type.label, el('div', { className: 'muted small' }, type.slug)),
        el('td', {}, type.builtin ? 'built-in' : 'custom'),
        el('td', { className: 'tags' }, type.fields.map((field) => `${field.name} (${field.kind}${field.required ? ', required' : ''})`).join(', ') || '—'),
        el('td', { className: 'actions' }, ...actions),
      );
    }),
  );
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  canManage = user.capabilities.includes('settings:manage');
  byId('type-new').hidden = !canManage;
  byId('type-new').addEventListener('click', () => openEditor(null));
  byId('type-cancel').addEventListener('click', () => {
    byId('type-editor').hidden = true;
  });
  byId('field-add').addEventListener('click', () => {
    const row = fieldRow();
    byId('fields').append(row);
    row.querySelector('.field-name').focus();
  });
  byId('type-form').addEventListener('submit', (event) => {
    event.preventDefault();
    return withButton(byId('type-save'), 'type-error', async () => {
      const body = { label: byId('type-label').value.trim(), fields: readFields() };
      const saved = editing
        ? await api('PATCH', `/api/content-types/${encodeURIComponent(editing.slug)}`, body)
        : await api('POST', '/api/content-types', { slug: byId('type-slug').value.trim(), ...body });
      openEditor(saved);
      say('type-status', 'Saved.');
      await load();
    });
  });
  try {
    await load();
  } catch (error) {
    say('types-error', error.message);
  }
  byId('page').hidden = false;
  markReady();
}

void start();
