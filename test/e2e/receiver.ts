import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HookReceiver {
  url: string;
  received: Array<{ headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/** A loopback webhook target that records every request and answers 200. */
export async function startHookReceiver(): Promise<HookReceiver> {
  const received: HookReceiver['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
