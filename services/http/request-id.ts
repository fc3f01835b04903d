import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The caller's `x-request-id` when it is a plain token (so it can go into logs as is), else a new one. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : randomUUID();
}
