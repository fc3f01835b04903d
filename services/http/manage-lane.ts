import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import type { Operation } from '../core/operation.ts';
import type { Principal } from '../core/principal.ts';
import { etagMatches } from '../core/file-reply.ts';
import { requestHost } from '../core/tenants.ts';
import { clientAddress, trustsProxy } from '../core/proxy-trust.ts';
import type { HeldReadAdmission, LaneAdmission } from '../access/lane-admission.ts';
import type { LiveResult } from '../access/live-state.ts';
import type { ReadyAnswer } from '../public-read/state.ts';
import type { HeldKeyedAnswer } from '../manage-read/held-answers.ts';
import { requestIdOf } from './request-id.ts';
import { laneLogLine, laneRecorder, laneSpans } from './request-telemetry.ts';

declare module 'fastify' {
  interface FastifyInstance {
    manageLane: ManageLane;
  }
}

const MANAGE_PREFIX = '/api/manage/v1/';
/** The prefix of the routes' patterns (an operation's path starts with its own slash). */
const MANAGE_ROUTE_PREFIX = MANAGE_PREFIX.slice(0, -1);

/**
 * The management lane (docs/access.md, "Held management reads"): the public lane's counterpart for
 * keyed reads, in two halves.
 * - `slot(operation)`: a `heldAnswer` GET that runs the full path with a key keeps its serialized
 *   answer for that key and exact URL (services/manage-read/held-answers.ts).
 * - `answer(request, response, fullPath)`: in front of Fastify. A GET whose key this gateway holds
 *   as valid and whose answer it holds for that key and URL is counted and checked by the lane
 *   admission (access/lane-admission.ts) in one round trip (the same count, access state and key
 *   checks as the full path: revocations,
 *   role and switch changes are seen on the next request) and, if admitted, sent as held, with its
 *   rate-limit headers. Anything else goes to `fullPath`, which reuses the count the lane made.
 * A request with an Origin (browser rules), a body, or no bearer never takes this lane.
 */
export interface ManageLane {
  /** Requests this lane answered (diagnostics and tests). */
  readonly answered: number;
  slot(operation: Operation): ((request: FastifyRequest, principal: Principal) => ((answer: ReadyAnswer) => void) | undefined) | null;
  /** The count this lane made for a request it handed to the full path. */
  countedFor(request: IncomingMessage): LiveResult | undefined;
  /** True when the lane took the request: it then answers it or hands it to `fullPath`. */
  answer(request: IncomingMessage, response: ServerResponse, fullPath: () => void): boolean;
}

export function createManageLane(services: Services, access: LaneAdmission, log: () => FastifyBaseLogger): ManageLane {
  let answered = 0;
  const counted = new WeakMap<IncomingMessage, LiveResult>();
  const { manageAnswers, config } = services;
  // The client address exactly as Fastify's `request.ip` gives it to the full path.
  const trusts = trustsProxy(config.TRUST_PROXY);
  const record = laneRecorder(services, 'manage-held');
  const spans = laneSpans(services);

  /** Sends the held answer as admitted, or hands the request to the full path with the count made for it. */
  function send(
    request: IncomingMessage,
    response: ServerResponse,
    fullPath: () => void,
    held: HeldKeyedAnswer,
    admission: HeldReadAdmission,
    started: number,
  ) {
    if (!admission.headers) {
      if (admission.counted) counted.set(request, admission.counted);
      fullPath();
      return;
    }
    answered++;
    const span = spans?.(request, MANAGE_ROUTE_PREFIX, held.operation.path);
    const reqId = requestIdOf(request);
    // The headers, in the order, the full path sends them (test/access/held-reads.test.ts compares both).
    const { ratelimit, 'ratelimit-policy': policy } = admission.headers;
    if (etagMatches(request.headers['if-none-match'], held.etag)) {
      response.writeHead(304, { 'x-request-id': reqId, 'x-content-type-options': 'nosniff', ratelimit, 'ratelimit-policy': policy, etag: held.etag });
      response.end();
    } else {
      response.writeHead(200, {
        'x-request-id': reqId,
        'x-content-type-options': 'nosniff',
        ratelimit,
        'ratelimit-policy': policy,
        etag: held.etag,
        'content-type': 'application/json; charset=utf-8',
        'content-length': held.length,
      });
      response.end(held.body);
    }
    const responseTime = performance.now() - started;
    record(held.operation, response.statusCode, responseTime / 1000);
    span?.end(response.statusCode);
    log().info(laneLogLine(reqId, response.statusCode, responseTime, span), 'request completed');
  }

  return {
    get answered() {
      return answered;
    },
    countedFor: (request) => counted.get(request),

    slot(operation) {
      // Plugin operations are mounted later and their collections are not watched: never held.
      if (operation.surface !== 'manage' || operation.method !== 'GET' || !operation.heldAnswer || operation.plugin || operation.produces) return null;
      return (request, principal) => {
        const scope = request.siteScope;
        const accessVersion = access.accessVersionOf(principal);
        if (!scope || principal.kind !== 'key' || accessVersion === undefined) return undefined;
        return manageAnswers.slot(scope.workspace.dbName, scope.site._id, principal.keyId, request.url, operation, accessVersion)?.keep;
      };
    },

    answer(request, response, fullPath) {
      const { url, headers } = request;
      if (
        request.method !== 'GET' ||
        !url?.startsWith(MANAGE_PREFIX) ||
        !headers.authorization ||
        headers.origin ||
        headers['content-length'] ||
        headers['transfer-encoding']
      )
        return false;
      const scope = services.sites.peek(requestHost(headers.host, request.socket.remoteAddress, services.config.HOST));
      if (!scope || scope.workspace.status !== 'active') return false;
      const keyId = access.peekKeyId(scope, headers.authorization);
      const held = keyId ? manageAnswers.peek(scope.workspace.dbName, scope.site._id, keyId, url) : undefined;
      if (!keyId || !held) return false;
      const started = performance.now();
      const credentials = { authorization: headers.authorization, cookies: {}, ip: clientAddress(request, trusts), method: 'GET' };
      const now = access.admitHeldReadNow(scope, credentials, keyId, held.operation, held.accessVersion);
      if (now) send(request, response, fullPath, held, now, started);
      else {
        // Nothing counted when the round trip fails: the full path runs and answers whatever it meets.
        access.admitHeldRead(scope, credentials, keyId, held.operation, held.accessVersion).then((admission) => {
          // Still held after the round trip: a watched write that finished meanwhile sends this one the full path.
          const still = manageAnswers.peek(scope.workspace.dbName, scope.site._id, keyId, url) === held;
          send(request, response, fullPath, held, still ? admission : { counted: admission.counted }, started);
        }, fullPath);
      }
      return true;
    },
  };
}
