import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import type { AccessGate } from '../access/gate.ts';
import { NotFoundError } from '../core/errors.ts';
import { etagMatches } from '../core/file-reply.ts';
import { requireScope } from './request-scope.ts';
import { openPreviewFile, PREVIEW_PREFIX, resolvePreview } from '../export/preview.ts';
import { EXPORT_CSP_HEADER } from '../export/csp.ts';

/**
 * Anonymous, like the public site it previews, so behind its Public API switch; not indexed; under
 * the exported pages' own CSP (services/export/csp.ts).
 */
async function servePreview(services: Services, gate: AccessGate, request: FastifyRequest, reply: FastifyReply) {
  const scope = requireScope(request);
  await gate.assertPublicOpen(scope);
  const db = services.workspaceDb(scope.workspace);
  const raw = request.url.split('?')[0].slice(PREVIEW_PREFIX.length + 1);
  const answer = await resolvePreview(db, scope.site._id, raw);
  reply.headers({ 'x-robots-tag': 'noindex', 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' });
  if (answer.kind === 'missing') throw new NotFoundError('No static export to preview');
  if (answer.kind === 'redirect') return reply.redirect(answer.location, answer.status);
  const { file } = answer;
  const etag = `"${file.sha}"`;
  reply.headers({ etag, 'content-security-policy': EXPORT_CSP_HEADER, 'content-type': file.contentType, 'content-length': String(file.length) });
  if (answer.status === 200 && etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  reply.code(answer.status);
  if (request.method === 'HEAD' || file.length === 0) return reply.send();
  return reply.send(openPreviewFile(db, file));
}

/** `/static-preview/*` on a site's host: the last good export of that site (docs/plugins.md, "Preview"). */
export async function exportPreviewExtension(app: FastifyInstance, services: Services, gate: AccessGate): Promise<void> {
  const handler = (request: FastifyRequest, reply: FastifyReply) => servePreview(services, gate, request, reply);
  app.route({
    method: ['GET', 'HEAD'],
    url: PREVIEW_PREFIX,
    handler: async (request, reply) => {
      await gate.assertPublicOpen(requireScope(request));
      return reply.redirect(`${PREVIEW_PREFIX}/`, 301);
    },
  });
  app.route({ method: ['GET', 'HEAD'], url: `${PREVIEW_PREFIX}/*`, handler });
}
