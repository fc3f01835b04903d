import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import type { AccessGate } from '../access/gate.ts';
import { AppError, NotFoundError } from '../core/errors.ts';
import { requireScope } from './request-scope.ts';
import { MEDIA_COLLECTIONS, fileIdOf, type MediaDoc } from '../media/model.ts';
import { openFileStream } from '../media/read-stream.ts';
import { parseRange } from '../media/range.ts';

/**
 * Items can be trashed, after which their URL must answer 404, so responses are cacheable for a
 * while but not `immutable`. The bytes behind a file id never change (a replace stores new bytes
 * under a new one, and the item's URL then carries it as `?v=`), so the file id is a strong ETag.
 */
const CACHE_CONTROL = 'public, max-age=3600';

function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate === etag || candidate === `W/${etag}`;
  });
}

async function serveFile(services: Services, gate: AccessGate, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  const scope = requireScope(request);
  await gate.assertPublicOpen(scope);
  const db = services.workspaceDb(scope.workspace);
  const doc = await db.collection<MediaDoc>(MEDIA_COLLECTIONS.items).findOne({ _id: id, siteId: scope.site._id, status: 'stored' });
  if (!doc) throw new NotFoundError('Media item not found');

  const etag = `"${fileIdOf(doc)}"`;
  const validators = {
    etag,
    'cache-control': CACHE_CONTROL,
    'last-modified': doc.createdAt.toUTCString(),
    'accept-ranges': 'bytes',
  };
  if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).headers(validators).send();

  const ifRange = request.headers['if-range'];
  const rangeHeader = ifRange === undefined || ifRange === etag ? request.headers.range : undefined;
  const range = parseRange(rangeHeader, doc.size);
  if (range === 'unsatisfiable') {
    throw new AppError(416, 'Range not satisfiable', { 'content-range': `bytes */${doc.size}`, 'accept-ranges': 'bytes' });
  }
  reply.headers({
    ...validators,
    'x-content-type-options': 'nosniff',
    'content-disposition': contentDisposition(doc.filename),
    // A file opened directly runs no script and loads nothing, whatever it turns out to be.
    ...(doc.mimeType === 'application/pdf' ? {} : { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" }),
  });
  reply.type(doc.mimeType);
  if (range) {
    reply.code(206).headers({
      'content-range': `bytes ${range.start}-${range.end}/${doc.size}`,
      'content-length': String(range.end - range.start + 1),
    });
  } else {
    reply.header('content-length', String(doc.size));
  }
  if (request.method === 'HEAD' || doc.size === 0) return reply.send();
  return reply.send(openFileStream(db, doc, range ?? undefined));
}

/**
 * The public file URL of every media item: `/media/files/:id/:filename` (the filename is only for
 * people and download dialogs). Anonymous, like the site's pages that embed these files, and so
 * under the site's Public API switch: off → 404 for everyone, signed in or not (docs/media.md).
 */
export async function mediaFilesExtension(app: FastifyInstance, services: Services, gate: AccessGate): Promise<void> {
  const handler = (request: FastifyRequest, reply: FastifyReply) => serveFile(services, gate, request, reply);
  // HEAD is declared, not left to Fastify's automatic HEAD route, which would read the whole file
  // from GridFS only to throw it away (and send Content-Length: 0 for an empty reply).
  for (const url of ['/media/files/:id', '/media/files/:id/:filename']) app.route({ method: ['GET', 'HEAD'], url, handler });
}
