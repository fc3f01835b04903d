import { createServer, type AddressInfo, type Socket } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import type { Services } from '../core/context.ts';

export interface MetricsListener {
  /** `http://host:port`, for logs and tests. */
  readonly address: string;
  close(): Promise<void>;
}

/** A scrape's request head is a line and a few headers; anything longer is refused. */
const MAX_HEAD_BYTES = 16 * 1024;

/** One HTTP/1.1 answer on a connection that closes after it. */
function answer(socket: Socket, status: string, contentType: string, body: string): void {
  const head = `HTTP/1.1 ${status}\r\ncontent-type: ${contentType}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
  socket.end(head + body);
}

const NOT_FOUND = '{"error":"Not found"}';
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The process's Prometheus endpoint (`GET /metrics`, text format 0.0.4) on a listener of its own,
 * apart from the API: nothing it serves is reachable through the public port, and a scraper never
 * competes with requests for the API's connection limits. `more` appends another exposition (the
 * worker's Temporal SDK series) to each scrape.
 *
 * Answered on a plain TCP server (one request per connection, then closed), not Node's HTTP server:
 * a scrape through `node:http` ran the same response code as the API's answers with headers and a
 * body of other shapes, and the gateway's cached answers cost about 2.5 µs more each after it, for
 * good (bench/RESULTS.md, session 19: metrics on against off, with and without the scrapes).
 */
export async function startMetricsListener(services: Services, port: number, more?: () => Promise<string>): Promise<MetricsListener> {
  const { registry } = services.metrics;
  // Process figures (CPU, memory, event loop delay, GC) only where someone scrapes them.
  collectDefaultMetrics({ register: registry });
  const scrape = async (socket: Socket) => {
    try {
      const own = await registry.metrics();
      const extra = more ? await more().catch((error: unknown) => `# the Temporal SDK's metrics are unavailable: ${(error as Error).message}\n`) : '';
      answer(socket, '200 OK', registry.contentType, own + extra);
    } catch (error) {
      services.log.error({ err: error }, 'metrics scrape failed');
      answer(socket, '500 Internal Server Error', JSON_TYPE, '{"error":"Internal server error"}');
    }
  };
  const server = createServer((socket) => {
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD_BYTES) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const [method, target] = head.slice(0, head.indexOf('\r\n')).split(' ');
      if (method !== 'GET' || (target ?? '').split('?')[0] !== '/metrics') answer(socket, '404 Not Found', JSON_TYPE, NOT_FOUND);
      else void scrape(socket);
    };
    socket.on('data', onData);
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
