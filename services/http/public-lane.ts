import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { Services } from '../core/context.ts';
import type { Operation } from '../core/operation.ts';
import { etagMatches } from '../core/file-reply.ts';
import { requestHost } from '../core/tenants.ts';
import type { LaneAdmission } from '../access/lane-admission.ts';
import { peekReadyAnswer, readyAnswerSlot, type ReadyAnswer } from '../public-read/state.ts';
import { requestIdOf } from './request-id.ts';
import { laneLogLine, laneRecorder, laneSpans } from './request-telemetry.ts';

declare module 'fastify' {
  interface FastifyInstance {
    publicLane: PublicLane;
  }
}

/** The public surface's prefix: only its URLs can have a held answer. */
const PUBLIC_PREFIX = '/api/v1';

/**
 * The public cache-hit lane (docs/content.md, "Public read cache"), in two halves:
 * - `slot(operation)`: a public GET that runs the full path keeps its serialized answer for its
 *   exact URL (only when the lane admission says a ready answer is admissible and nothing changed meanwhile);
 * - `answer(req, res)`: the HTTP server's first step. A GET for a URL whose answer is held under the
 *   site's current content generation is sent as it is (same bytes, ETag, headers; 304 on
 *   If-None-Match) before Fastify sees the request: no routing, hooks, context, input parsing or
 *   serialization, no promise and no database command. Only when the Host is held in memory for an
 *   active workspace and the synchronous `admitsReadyAnswer` (access/lane-admission.ts) says the
 *   full path would neither refuse nor count anything. Anything else returns false and the request
 *   takes the full path.
 * The URL is the key: a URL routes to one operation, and another spelling is another entry.
 */
export interface PublicLane {
  /** Requests this lane answered (diagnostics and tests). */
  readonly answered: number;
  slot(operation: Operation): ((request: FastifyRequest) => ((answer: ReadyAnswer) => void) | undefined) | null;
  answer(request: IncomingMessage, response: ServerResponse): boolean;
}

export function createPublicLane(services: Services, access: LaneAdmission, log: () => FastifyBaseLogger): PublicLane {
  let answered = 0;
  const record = laneRecorder(services, 'public-cache');
  const spans = laneSpans(services);
  return {
    get answered() {
      return answered;
    },
    slot(operation) {
      if (operation.surface !== 'public' || operation.method !== 'GET' || operation.produces) return null;
      return (request) => {
        const scope = request.siteScope;
        if (!scope || !access.admitsReadyAnswer(scope, operation, request.cookies ?? {})) return undefined;
        return readyAnswerSlot(services, scope.site._id, request.url, operation)?.keep;
      };
    },

    answer(request, response) {
      const { url, headers } = request;
      // A request with a body is left to the full path, which reads (and limits) it.
      if (request.method !== 'GET' || !url?.startsWith(PUBLIC_PREFIX) || headers['content-length'] || headers['transfer-encoding']) return false;
      const scope = services.sites.peekThroughOutage(requestHost(headers.host, request.socket.remoteAddress, services.config.HOST));
      if (!scope || scope.workspace.status !== 'active') return false;
      const held = peekReadyAnswer(services, scope.site._id, url);
      if (!held || !access.admitsReadyAnswer(scope, held.operation, headers.cookie ? fastifyCookie.parse(headers.cookie) : {})) return false;
      const started = performance.now();
      answered++;
      const span = spans?.(request, PUBLIC_PREFIX, held.operation.path);
      const reqId = requestIdOf(request);
      // The headers, in the order, the full path sends them (test/content/ready-answers.test.ts compares both).
      if (etagMatches(headers['if-none-match'], held.etag)) {
        response.writeHead(304, { 'x-request-id': reqId, 'x-content-type-options': 'nosniff', etag: held.etag });
        response.end();
      } else {
        response.writeHead(200, {
          'x-request-id': reqId,
          'x-content-type-options': 'nosniff',
          etag: held.etag,
          'content-type': 'application/json; charset=utf-8',
          'content-length': held.length,
        });
        // A string, not a Buffer: Node sends the headers and a string body in one write.
        response.end(held.body);
      }
      const responseTime = performance.now() - started;
      record(held.operation, response.statusCode, responseTime / 1000);
      span?.end(response.statusCode);
      // The one access-log line the full path writes (Fastify's "request completed").
      log().info(laneLogLine(reqId, response.statusCode, responseTime, span), 'request completed');
      return true;
    },
  };
}
