// `/admin/email-templates`: the site's mail templates; edit, preview (rendered by the preview
// operation with sample data; the HTML in a sandboxed srcdoc frame that runs nothing, the text as
// text), save, restore the built-in text.
import { api, byId, el, markReady, requireUser, say, withButton } from './common.js';

let current = null;
const path = (key) => `/api/email-templates/${encodeURIComponent(key)}`;
const draft = () => ({ subject: byId('template-subject').value, html: byId('template-html').value, text: byId('template-text').value });

async function openTemplate(key) {
  current = await api('GET', path(key));
  byId('template-editor').hidden = false;
  byId('preview').hidden = true;
  say('template-title', current.name);
  say('template-variables', `Variables: ${current.variables.map((name) => `{{${name}}}`).join(', ')}`);
  byId('template-subject').value = current.subject;
  byId('template-html').value = current.html;
  byId('template-text').value = current.text;
  byId('template-restore').hidden = !current.customized;
  say('template-status', '');
  say('template-error', '');
  byId('template-subject').focus();
}

async function load() {
  const { data } = await api('GET', '/api/email-templates?limit=200');
  byId('templates').replaceChildren(
    ...data.map((template) => {
      const edit = el('button', { type: 'button', className: 'secondary', 'aria-label': `Edit template ${template.name}` }, 'Edit');
      edit.addEventListener('click', () => withButton(edit, 'templates-error', () => openTemplate(template.key)));
      return el(
        'tr',
        { dataset: { templateKey: template.key } },
        el('td', {}, template.name),
        el('td', { className: 'muted small' }, template.description),
        el('td', {}, template.customized ? 'customized' : 'built-in'),
        el('td', { className: 'actions' }, edit),
      );
    }),
  );
}

async function start() {
  const user = await requireUser();
  if (!user) return;
  byId('template-preview').addEventListener('click', () =>
    withButton(byId('template-preview'), 'template-error', async () => {
      const rendered = await api('POST', `${path(current.key)}/preview`, draft());
      say('preview-subject', rendered.subject);
      // srcdoc is set as a property (no markup is built here); the empty sandbox runs no script and has no origin.
      byId('preview-html').srcdoc = rendered.html;
      say('preview-text', rendered.text);
      byId('preview').hidden = false;
    }),
  );
  byId('template-form').addEventListener('submit', (event) => {
    event.preventDefault();
    return withButton(byId('template-save'), 'template-error', async () => {
      await api('PUT', path(current.key), draft());
      await openTemplate(current.key);
      say('template-status', 'Saved.');
      await load();
    });
  });
  byId('template-restore').addEventListener('click', () =>
    withButton(byId('template-restore'), 'template-error', async () => {
      if (!confirm(`Restore the built-in text of ${current.name}? Your changes are lost.`)) return;
      await api('DELETE', path(current.key));
      await openTemplate(current.key);
      say('template-status', 'Restored.');
      await load();
    }),
  );
  try {
    await load();
  } catch (error) {
    // Without email-templates:manage the list is refused: the page says so and offers nothing.
    say('templates-error', error.message);
  }
  byId('page').hidden = false;
  markReady();
}

void start();
