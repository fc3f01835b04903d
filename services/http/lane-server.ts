import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import type { PublicLane } from './public-lane.ts';
import type { ManageLane } from './manage-lane.ts';
import type { requestSpans } from './request-telemetry.ts';

declare module 'node:http' {
  interface IncomingMessage {
    /** Epoch ms of arrival, before any lane: a request's wait for a missing engine is bounded from here (core/engines.ts). */
    receivedAt?: number;
  }
}

/**
 * Fastify's HTTP/1 server with the lanes in front (the same timeouts Fastify gives its own server):
 * a held public answer, then a held management read, else Fastify. `inject()` does not pass here,
 * so tests of the lanes use a listening server.
 */
export function laneServerFactory(
  lanes: () => { publicLane: PublicLane; manageLane: ManageLane },
  traced: ReturnType<typeof requestSpans> = null,
): FastifyServerFactory {
  return (handler, rawOptions) => {
    const options = rawOptions as { keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket?: number };
    // Traced, every request Fastify answers runs inside its server span (request-telemetry.ts); the
    // lanes make theirs without entering a context (they await nothing, or only their admission).
    const fullPath = traced
      ? (request: IncomingMessage, response: ServerResponse) => traced(request, response, () => handler(request, response))
      : (request: IncomingMessage, response: ServerResponse) => handler(request, response);
    const server = createServer((request, response) => {
      request.receivedAt = Date.now();
      const { publicLane, manageLane } = lanes();
      if (publicLane.answer(request, response)) return;
      if (!manageLane.answer(request, response, () => fullPath(request, response))) fullPath(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}
