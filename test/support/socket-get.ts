import { request as httpRequest } from 'node:http';

export interface SocketAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}

/**
 * A GET over a real connection to a listening gateway: the lanes in front of Fastify
 * (services/http/lane-server.ts) only see requests that come through its HTTP server, not `inject`.
 */
export function socketGet(port: number, path: string, headers: Record<string, string> = {}): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'localhost', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        resolve({ statusCode: response.statusCode!, headers: response.headers, body, json: () => JSON.parse(body) });
      });
    });
    sent.on('error', reject);
    sent.end();
  });
}
