import type { OperationContext } from '../core/context.ts';
import { AppError, NotFoundError } from '../core/errors.ts';
import { etagMatches, type FileReply } from '../core/file-reply.ts';
import { parseRange } from '../media/range.ts';
import { tarGzStream, tarLength, tarStream } from './archive.ts';
import { readExportState } from './model.ts';

export const ARCHIVE_FORMATS = ['tar.gz', 'tar'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

const TYPES: Record<ArchiveFormat, string> = { 'tar.gz': 'application/gzip', tar: 'application/x-tar' };

/**
 * The last good export as one archive. `tar.gz` (default) is compressed as it streams, so it goes
 * chunked without ranges; `tar` has an exact Content-Length and answers byte ranges (If-Range
 * honoured). Both carry a strong ETag that changes exactly when the served output does.
 */
export async function downloadReply(ctx: OperationContext, format: ArchiveFormat): Promise<FileReply> {
  const state = await readExportState(ctx.db, ctx.site._id);
  const live = state?.live;
  if (!state?.outputVersion || !live || live.files === 0) throw new NotFoundError('No static export to download yet');
  const etag = `"${state.outputVersion}-${format === 'tar' ? 't' : 'z'}"`;
  const name = `${ctx.site.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'site'}-export.${format}`;
  const headers: Record<string, string> = {
    etag,
    'content-type': TYPES[format],
    'content-disposition': `attachment; filename="${name}"`,
    'cache-control': 'private, no-cache',
    'accept-ranges': format === 'tar' ? 'bytes' : 'none',
    'x-content-type-options': 'nosniff',
  };
  if (etagMatches(ctx.request.ifNoneMatch, etag)) return { kind: 'file', status: 304, headers, body: null };
  if (format === 'tar.gz') return { kind: 'file', status: 200, headers, body: tarGzStream(ctx.db, ctx.site._id, live) };

  const { bytes } = await tarLength(ctx.db, ctx.site._id, live);
  const { ifRange } = ctx.request;
  const range = ifRange === undefined || ifRange === etag ? parseRange(ctx.request.range, bytes) : null;
  if (range === 'unsatisfiable') throw new AppError(416, 'Range not satisfiable', { 'content-range': `bytes */${bytes}`, 'accept-ranges': 'bytes' });
  if (range) {
    return {
      kind: 'file',
      status: 206,
      headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${bytes}`, 'content-length': String(range.end - range.start + 1) },
      body: tarStream(ctx.db, ctx.site._id, live, range),
    };
  }
  return { kind: 'file', status: 200, headers: { ...headers, 'content-length': String(bytes) }, body: tarStream(ctx.db, ctx.site._id, live, null) };
}
