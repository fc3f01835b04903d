import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import type { AccessGate } from '../access/gate.ts';
import { NotFoundError } from '../core/errors.ts';
import { etagMatches } from '../core/file-reply.ts';
import { requireScope } from './request-scope.ts';
import { openPreviewFile, PREVIEW_PREFIX, resolvePreview } from '../export/preview.ts';

/**
 * Pages of the export run no script; styles are inline (the theme's), images and media come from
 * the site's media URLs. The preview is anonymous, like the public site it previews, and not indexed.
 */
const PREVIEW_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src * data:; media-src *; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

async function servePreview(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const scope = requireScope(request);
  const db = services.workspaceDb(scope.workspace);
  const raw = request.url.split('?')[0].slice(PREVIEW_PREFIX.length + 1);
  const answer = await resolvePreview(db, scope.site._id, raw);
  reply.headers({ 'x-robots-tag': 'noindex', 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' });
  if (answer.kind === 'missing') throw new NotFoundError('No static export to preview');
  if (answer.kind === 'redirect') return reply.redirect(answer.location, answer.status);
  const { file } = answer;
  const etag = `"${file.sha}"`;
  reply.headers({ etag, 'content-security-policy': PREVIEW_CSP, 'content-type': file.contentType, 'content-length': String(file.length) });
  if (answer.status === 200 && etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  reply.code(answer.status);
  if (request.method === 'HEAD' || file.length === 0) return reply.send();
  return reply.send(openPreviewFile(db, file));
}

/** `/static-preview/*` on a site's host: the last good export of that site (docs/plugins.md, "Preview"). */
export async function exportPreviewExtension(app: FastifyInstance, services: Services, _gate: AccessGate): Promise<void> {
  const handler = (request: FastifyRequest, reply: FastifyReply) => servePreview(services, request, reply);
  app.route({ method: ['GET', 'HEAD'], url: PREVIEW_PREFIX, handler: (_request, reply) => reply.redirect(`${PREVIEW_PREFIX}/`, 301) });
  app.route({ method: ['GET', 'HEAD'], url: `${PREVIEW_PREFIX}/*`, handler });
}
