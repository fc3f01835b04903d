import type { FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import type { Operation } from '../core/operation.ts';
import type { AccessGate } from '../access/gate.ts';
import { peekReadyAnswer, readyAnswerSlot, type ReadyAnswer } from '../public-read/state.ts';

/** What the lane found for one request: the answer to send as is, or where to keep the one computed. */
export interface LaneTicket {
  answer?: ReadyAnswer;
  keep?: (answer: ReadyAnswer) => void;
}

/**
 * The public cache-hit lane (docs/content.md, "Public read cache"). A public GET whose exact URL was
 * already answered under the site's current content generation gets the same bytes and ETag again,
 * before authentication, context construction or input parsing — only when the gate says the full
 * path would neither refuse nor count anything (`admitsReadyAnswer`) and the site's public state is
 * held under the change feed. Synchronous: a hit costs no promise and no database command.
 * Returns null for operations the lane never serves.
 */
export function publicLane(services: Services, gate: AccessGate, operation: Operation): ((request: FastifyRequest) => LaneTicket | null) | null {
  if (operation.surface !== 'public' || operation.method !== 'GET' || operation.produces) return null;
  return (request) => {
    const scope = request.siteScope;
    if (!scope || !gate.admitsReadyAnswer(scope, operation, request.cookies ?? {})) return null;
    // The URL is the key: another spelling of the same input is another entry, computed once.
    const key = `${operation.id} ${request.url}`;
    const answer = peekReadyAnswer(services, scope.site._id, key);
    if (answer) return { answer };
    return { keep: readyAnswerSlot(services, scope.site._id, key)?.keep };
  };
}
