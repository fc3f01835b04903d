import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../core/context.ts';

/** A process's readiness: `missing` names what it lacks (the engines, or the worker's own polling). */
export interface Readiness {
  ready: boolean;
  missing: string[];
}

export type ReadinessCheck = (services: Services) => Promise<Readiness>;

/** The answers of both probes, whichever listener serves them (docs/production.md, "Probes"). */
const LIVE = { status: 'ok' };
const readyAnswer = (readiness: Readiness) =>
  readiness.ready ? { status: 200, body: { status: 'ready' } } : { status: 503, body: { error: 'Service unavailable', missing: readiness.missing } };

/**
 * `GET /livez` (the process answers: no engine is called, so a missing engine never gets a
 * gateway restarted) and `GET /readyz` (503 naming the missing engines), siteless like /healthz.
 */
export function probesExtension(readiness: ReadinessCheck) {
  return async (app: FastifyInstance, services: Services) => {
    app.get('/livez', { config: { siteless: true } }, async () => LIVE);
    app.get('/readyz', { config: { siteless: true } }, async (_request, reply) => {
      const { status, body } = readyAnswer(await readiness(services));
      return reply.code(status).send(body);
    });
  };
}

export interface ProbeListener {
  /** `http://host:port`, for logs and tests. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * The worker's probes (`WORKER_HEALTH_PORT`): the worker serves no HTTP otherwise, so a listener
 * of its own answering only `GET /livez` and `GET /readyz`, bound to `HOST` like the gateway's API.
 */
export async function startProbeListener(services: Services, port: number, readiness: () => Promise<Readiness>): Promise<ProbeListener> {
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || (path !== '/livez' && path !== '/readyz')) {
      response.writeHead(404, json).end('{"error":"Not found"}');
      return;
    }
    if (path === '/livez') {
      response.writeHead(200, json).end(JSON.stringify(LIVE));
      return;
    }
    readiness().then(
      (result) => {
        const { status, body } = readyAnswer(result);
        response.writeHead(status, json).end(JSON.stringify(body));
      },
      (error: unknown) => {
        services.log.error({ err: error }, 'readiness check failed');
        response.writeHead(500, json).end('{"error":"Internal server error"}');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, services.config.HOST, resolve);
  });
  const { address, port: bound } = server.address() as AddressInfo;
  return {
    address: `http://${address.includes(':') ? `[${address}]` : address}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
