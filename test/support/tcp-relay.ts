import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpRelay {
  /** `127.0.0.1:port`, to put in place of the engine's address. */
  readonly address: string;
  /**
   * The engine goes silent, as a host that stopped answering: open connections are cut and new
   * ones are accepted but never answered (the shared engine behind keeps running for everyone else).
   */
  silence(): void;
  /** Connections reach the engine again. */
  restore(): void;
  close(): Promise<void>;
}

/** A loopback TCP relay in front of an engine (`127.0.0.1:27117`), so a test can take it away from one process only. */
export async function startTcpRelay(upstream: string): Promise<TcpRelay> {
  const [host, port] = [upstream.slice(0, upstream.lastIndexOf(':')), Number(upstream.slice(upstream.lastIndexOf(':') + 1))];
  let silent = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    if (silent) return;
    const engine = connect(port, host);
    open.add(engine);
    engine.on('close', () => (open.delete(engine), client.destroy()));
    engine.on('error', () => undefined);
    client.on('close', () => engine.destroy());
    client.pipe(engine).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    silence() {
      silent = true;
      cut();
    },
    restore() {
      silent = false;
      cut();
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
