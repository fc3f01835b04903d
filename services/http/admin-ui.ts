import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import type { AccessGate } from '../access/gate.ts';

/** The asset folder sits beside this one, so the gateway image (which copies `services/`) has it. */
const ASSET_DIR = new URL('../admin-ui/', import.meta.url);

/**
 * Page path → its title, module and `<main>` file. Every page is `shell.html` (head, navigation)
 * around its own `<main>`; its module fetches the JSON routes.
 */
const PAGES: Readonly<Record<string, { title: string; script: string; main: string }>> = {
  '/admin': { title: 'Administration', script: 'index.js', main: 'index.html' },
  '/admin/api-keys': { title: 'API keys · Administration', script: 'api-keys.js', main: 'api-keys.html' },
  '/admin/webhooks': { title: 'Webhooks · Administration', script: 'webhooks.js', main: 'webhooks.html' },
  '/admin/exports': { title: 'Exports · Administration', script: 'exports.js', main: 'exports.html' },
  '/admin/platform': { title: 'Workspaces · Operator console', script: 'platform.js', main: 'platform.html' },
  '/admin/users': { title: 'Users · Administration', script: 'users.js', main: 'users.html' },
  '/admin/account': { title: 'Your account · Administration', script: 'account.js', main: 'account.html' },
  '/admin/accept-invitation': { title: 'Accept your invitation', script: 'accept-invitation.js', main: 'accept-invitation.html' },
  '/admin/reset-password': { title: 'Reset your password', script: 'reset-password.js', main: 'reset-password.html' },
  '/admin/media': { title: 'Media library · Administration', script: 'media.js', main: 'media.html' },
  '/admin/menus': { title: 'Menus · Administration', script: 'menus.js', main: 'menus.html' },
  '/admin/redirects': { title: 'Redirects · Administration', script: 'redirects.js', main: 'redirects.html' },
  '/admin/roles': { title: 'Roles · Administration', script: 'roles.js', main: 'roles.html' },
  '/admin/taxonomies': { title: 'Taxonomies · Administration', script: 'taxonomies.js', main: 'taxonomies.html' },
  '/admin/comments': { title: 'Comments · Administration', script: 'comments.js', main: 'comments.html' },
  '/admin/types': { title: 'Content types · Administration', script: 'types.js', main: 'types.html' },
  '/admin/languages': { title: 'Languages · Administration', script: 'languages.js', main: 'languages.html' },
  '/admin/settings': { title: 'Settings · Administration', script: 'settings.js', main: 'settings.html' },
  '/admin/email-templates': { title: 'E-mail templates · Administration', script: 'email-templates.js', main: 'email-templates.html' },
  '/admin/content': { title: 'Content · Administration', script: 'content.js', main: 'content.html' },
  '/admin/entry': { title: 'Entry · Content · Administration', script: 'entry.js', main: 'entry.html' },
  '/admin/trash': { title: 'Trash · Content · Administration', script: 'trash.js', main: 'trash.html' },
};

/** The only files served under `/admin/assets/` (an allow-list: no path ever reaches the disk). */
const ASSETS: readonly string[] = [
  'admin.css',
  'common.js',
  'index.js',
  'api-keys.js',
  'webhooks.js',
  'exports.js',
  'platform.js',
  'users.js',
  'account.js',
  'accept-invitation.js',
  'reset-password.js',
  'media.js',
  'menus.js',
  'redirects.js',
  'roles.js',
  'taxonomies.js',
  'comments.js',
  'types.js',
  'languages.js',
  'settings.js',
  'email-templates.js',
  'content-common.js',
  'content.js',
  'entry.js',
  'entry-blocks.js',
  'entry-diff.js',
  'entry-revisions.js',
  'trash.js',
];

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/**
 * Scripts and styles only from this origin, no inline code, no framing, no plugins; `fetch` only
 * to this origin. Secrets are shown on these pages, so nothing foreign may run or read them.
 */
export const ADMIN_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const readAsset = (file: string) => readFileSync(new URL(file, ASSET_DIR));

function asset(body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

function load(file: string): Asset {
  const type = TYPES[file.slice(file.lastIndexOf('.'))];
  if (!type) throw new Error(`admin-ui: no content type for ${file}`);
  return asset(readAsset(file), type);
}

/** The shell around one page's `<main>`, its own navigation link marked as the current page. */
function composePage(shell: string, path: string, page: { title: string; script: string; main: string }): Asset {
  const main = readAsset(page.main)
    .toString('utf8')
    .trimEnd()
    .replace(/^(?=.)/gm, '  ');
  const html = shell
    .replace('{{title}}', page.title)
    .replace('{{script}}', page.script)
    .replace('{{main}}', () => main)
    .replace(`<a href="${path}"`, `<a href="${path}" aria-current="page"`);
  return asset(Buffer.from(html), TYPES['.html']!);
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  reply.headers({
    'content-type': asset.type,
    'content-security-policy': ADMIN_CSP,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    // Always revalidate: a deploy changes the files, and the ETag makes revalidation cheap.
    'cache-control': 'no-cache',
    etag: asset.etag,
  });
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.send(asset.body);
}

/**
 * `/admin`: the administration pages (sign-in, API keys, webhooks). Plain HTML shells with one
 * small vanilla module each; all data comes from the cookie-session JSON routes under `/api`, so
 * this plugin holds no logic and no data. Files are read once at start-up.
 */
export async function adminUiExtension(app: FastifyInstance, _services: Services, _gate: AccessGate): Promise<void> {
  const assets = new Map(ASSETS.map((file) => [file, load(file)]));
  const shell = readAsset('shell.html').toString('utf8');
  for (const [path, page] of Object.entries(PAGES)) {
    const composed = composePage(shell, path, page);
    app.get(path, (request, reply) => send(request, reply, composed));
  }
  // `/admin/` would break the pages' relative links; one canonical address per page.
  app.get('/admin/', (_request, reply) => reply.redirect('/admin', 308));
  app.get('/admin/assets/:file', (request, reply) => {
    const asset = assets.get((request.params as { file: string }).file);
    if (!asset) return reply.code(404).send({ error: 'Not found' });
    return send(request, reply, asset);
  });
}
