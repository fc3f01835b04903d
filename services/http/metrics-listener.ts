import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import type { Services } from '../core/context.ts';

export interface MetricsListener {
  /** `http://host:port`, for logs and tests. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * The process's Prometheus endpoint (`GET /metrics`, text format 0.0.4) on a listener of its own,
 * apart from the API: nothing it serves is reachable through the public port, and a scraper never
 * competes with requests for the API's connection limits. `more` appends another exposition (the
 * worker's Temporal SDK series) to each scrape.
 */
export async function startMetricsListener(services: Services, port: number, more?: () => Promise<string>): Promise<MetricsListener> {
  const { registry } = services.metrics;
  // Process figures (CPU, memory, event loop delay, GC) only where someone scrapes them.
  collectDefaultMetrics({ register: registry });
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Not found"}');
      return;
    }
    void (async () => {
      try {
        const own = await registry.metrics();
        const extra = more ? await more().catch((error: unknown) => `# the Temporal SDK's metrics are unavailable: ${(error as Error).message}\n`) : '';
        response.writeHead(200, { 'content-type': registry.contentType }).end(own + extra);
      } catch (error) {
        services.log.error({ err: error }, 'metrics scrape failed');
        response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Internal server error"}');
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, services.config.METRICS_HOST, resolve);
  });
  const { address, port: bound } = server.address() as AddressInfo;
  return {
    address: `http://${address.includes(':') ? `[${address}]` : address}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
