import { createServer } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import type { PublicLane } from './public-lane.ts';
import type { ManageLane } from './manage-lane.ts';

/**
 * Fastify's HTTP/1 server with the lanes in front (the same timeouts Fastify gives its own server):
 * a held public answer, then a held management read, else Fastify. `inject()` does not pass here,
 * so tests of the lanes use a listening server.
 */
export function laneServerFactory(lanes: () => { publicLane: PublicLane; manageLane: ManageLane }): FastifyServerFactory {
  return (handler, rawOptions) => {
    const options = rawOptions as { keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket?: number };
    const server = createServer((request, response) => {
      const { publicLane, manageLane } = lanes();
      if (publicLane.answer(request, response)) return;
      if (!manageLane.answer(request, response, () => handler(request, response))) handler(request, response);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}
