import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../core/context.ts';

/** A process's readiness: `missing` names what it lacks (the engines, or the worker's own polling); `clusters` each cluster's database. */
export interface Readiness {
  ready: boolean;
  missing: string[];
  clusters: Record<string, 'up' | 'down'>;
}

export type ReadinessCheck = (services: Services) => Readiness;

/**
 * Whether this process can serve, read from the engine watch (`services.engines`, so a probe never
 * waits on an engine): the default cluster's database (it holds the platform database: every
 * request needs it) and Temporal (not refused, and its last check answered within 2 s). Another
 * cluster down does not make the process unready: only the workspaces placed there answer 503, and
 * taking every gateway out of service for them would make it an outage for all. Nor does a worker
 * that does not poll: a gateway still serves every read and write.
 */
export function engineReadiness(services: Services): Readiness {
  const report = services.engines.report();
  const missing = report.missing.filter((name) => name === 'database' || name === 'temporal');
  return { ready: missing.length === 0, missing, clusters: report.clusters };
}

/** The answers of both probes, whichever listener serves them (docs/production.md, "Probes"). */
const LIVE = { status: 'ok' };
const readyAnswer = ({ ready, missing, clusters }: Readiness) =>
  ready ? { status: 200, body: { status: 'ready', clusters } } : { status: 503, body: { error: 'Service unavailable', missing, clusters } };

/**
 * `GET /livez` (the process answers: no engine is called, so a missing engine never gets a
 * gateway restarted) and `GET /readyz` (503 naming the missing engines), siteless like /healthz.
 */
export function probesExtension(readiness: ReadinessCheck) {
  return async (app: FastifyInstance, services: Services) => {
    app.get('/livez', { config: { siteless: true } }, async () => LIVE);
    app.get('/readyz', { config: { siteless: true } }, async (_request, reply) => {
      const { status, body } = readyAnswer(readiness(services));
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
export async function startProbeListener(services: Services, port: number, readiness: () => Readiness): Promise<ProbeListener> {
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
    const { status, body } = readyAnswer(readiness());
    response.writeHead(status, json).end(JSON.stringify(body));
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
