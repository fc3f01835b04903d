import type { Readable } from 'node:stream';
import { z } from 'zod';

/**
 * What an operation that answers a file (not JSON) returns: status, headers and a byte stream.
 * The REST adapter sends it as is; the handler decides validators and ranges from the request
 * facts (`range`, `ifRange`, `ifNoneMatch`), so it never touches HTTP objects.
 */
export interface FileReply {
  kind: 'file';
  status: 200 | 206 | 304;
  headers: Record<string, string>;
  /** null for 304 and HEAD-like answers. */
  body: Readable | null;
}

export const FileReplySchema = z.custom<FileReply>((value) => typeof value === 'object' && value !== null && (value as FileReply).kind === 'file');

/** Does an `If-None-Match` header match this ETag (weak comparison, `*` included)? */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === bare;
  });
}
