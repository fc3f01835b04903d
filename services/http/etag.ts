import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export function weakEtag(body: string | Buffer): string {
  return `W/"${createHash('sha1').update(body).digest('base64url')}"`;
}

export function etagMatches(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag.replace(/^W\//, '') === etag.replace(/^W\//, '');
  });
}

/** Sends a JSON body with an ETag; answers 304 when the client already has it. */
export function sendJsonWithEtag(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const body = JSON.stringify(payload);
  const etag = weakEtag(body);
  reply.header('etag', etag);
  if (etagMatches(request, etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(body);
}
