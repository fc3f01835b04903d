import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A content hash, not a security boundary: sha1 through the one-shot API is the cheapest here. */
export function weakEtag(body: string | Buffer): string {
  return `W/"${hash('sha1', body, 'base64url')}"`;
}

export function etagMatches(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag.replace(/^W\//, '') === etag.replace(/^W\//, '');
  });
}

/**
 * Serialized bodies of result objects that are served again as the same object (cached public
 * reads): the JSON and its hash are computed once per object, not once per request. One per
 * process (`services.responseBodies`, built in services/runtime.ts); entries leave with their object.
 */
export type ResponseBodies = WeakMap<object, { body: string; etag: string }>;
export const createResponseBodies = (): ResponseBodies => new WeakMap();

function serialize(serialized: ResponseBodies, payload: unknown): { body: string; etag: string } {
  const cacheable = typeof payload === 'object' && payload !== null;
  const hit = cacheable ? serialized.get(payload) : undefined;
  if (hit) return hit;
  const body = JSON.stringify(payload);
  const entry = { body, etag: weakEtag(body) };
  if (cacheable && Object.isFrozen(payload)) serialized.set(payload, entry);
  return entry;
}

/**
 * Sends a JSON body with an ETag; answers 304 when the client already has it. Results a handler
 * froze (`Object.freeze`, as the public read cache does) are serialized once and reused.
 */
export function sendJsonWithEtag(request: FastifyRequest, reply: FastifyReply, payload: unknown, serialized: ResponseBodies) {
  const { body, etag } = serialize(serialized, payload);
  reply.header('etag', etag);
  if (etagMatches(request, etag)) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(body);
}
