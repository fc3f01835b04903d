import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { etagMatches } from '../core/file-reply.ts';
import type { ReadyAnswer } from '../public-read/state.ts';

/** A content hash, not a security boundary: sha1 through the one-shot API is the cheapest here. */
export function weakEtag(body: string | Buffer): string {
  return `W/"${hash('sha1', body, 'base64url')}"`;
}

/** The JSON body of a result and its ETag, computed once and kept by the public cache-hit lane. */
export function serializeAnswer(payload: unknown): ReadyAnswer {
  const body = JSON.stringify(payload);
  return { body, etag: weakEtag(body) };
}

/**
 * Sends a JSON body with an ETag; answers 304 when the client already has it. `keep` receives the
 * serialized answer (the public lane stores it so the next identical request skips all of this).
 */
export function sendJsonWithEtag(request: FastifyRequest, reply: FastifyReply, payload: unknown, keep?: (answer: ReadyAnswer) => void) {
  const answer = serializeAnswer(payload);
  keep?.(answer);
  reply.header('etag', answer.etag);
  if (etagMatches(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(answer.body);
}
