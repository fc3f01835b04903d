import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.ts';

const mongoUri = process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27117';
/** /health's checks give each engine 2 s; the probe answers within that and the machine's slack. */
const BOUND_MS = 4000;

const probe = async (world: World, url: string, host = 'localhost') => {
  const started = performance.now();
  const answer = await world.app.inject({ url, headers: { host } });
  return { status: answer.statusCode, body: answer.json(), ms: performance.now() - started };
};

describe('the gateway probes, MongoDB reached through a relay the test can silence', () => {
  let relay: TcpRelay;
  let world: World;
  beforeAll(async () => {
    relay = await startTcpRelay(new URL(mongoUri).host);
    // directConnection: the driver stays on the relay instead of the address the engine advertises.
    world = await startWorld({ env: { MONGODB_URI: `mongodb://${relay.address}/?directConnection=true` } });
  });
  afterAll(async () => {
    relay?.restore();
    await world?.close();
    await relay?.close();
  });

  it('/livez and /readyz answer for any host (siteless) with the engines up', async () => {
    for (const host of ['localhost', 'no-such-site.example']) {
      expect(await probe(world, '/livez', host)).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await probe(world, '/readyz', host)).toMatchObject({ status: 200, body: { status: 'ready' } });
    }
    expect((await world.app.inject({ method: 'POST', url: '/readyz' })).statusCode).toBe(404);
  });

  it('/readyz is a 503 naming the database while MongoDB does not answer, within the bound; /livez stays 200; ready again once it answers', async () => {
    relay.silence();
    try {
      const missing = await probe(world, '/readyz');
      expect(missing).toMatchObject({ status: 503, body: { error: 'Service unavailable', missing: ['database'] } });
      expect(missing.ms).toBeLessThan(BOUND_MS);
      const live = await probe(world, '/livez');
      expect(live).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(live.ms).toBeLessThan(100);
    } finally {
      relay.restore();
    }
    await eventually(async () => (await probe(world, '/readyz')).status === 200, 'ready again', 30_000, 250);
  });
});

describe('the gateway probes while Temporal does not answer', () => {
  let silent: Server;
  const held = new Set<Socket>();
  let world: World;
  beforeAll(async () => {
    // Accepts and never answers: a Temporal frontend that hangs, not one that refuses at once.
    silent = createServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    world = await startWorld({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${(silent.address() as AddressInfo).port}` } });
  });
  afterAll(async () => {
    await world?.close();
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => silent?.close(() => resolve()));
  });

  it('/readyz is a 503 naming temporal within the bound; /livez stays 200', async () => {
    const missing = await probe(world, '/readyz');
    expect(missing).toMatchObject({ status: 503, body: { error: 'Service unavailable', missing: ['temporal'] } });
    expect(missing.ms).toBeLessThan(BOUND_MS);
    expect(await probe(world, '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});
