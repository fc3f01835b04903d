import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.ts';

const mongoUri = process.env.MONGODB_URI ?? 'mongodb://127.0.0.1:27117';
/** The probes read the engine watch: they never wait on an engine (this is the slack of a busy machine). */
const PROBE_MS = 1000;
/** The watch sees a database's connections cut at once and a hanging Temporal after its 2 s check: both well within this. */
const NOTICED_MS = 15_000;

/** The probe's answers until `done` holds, each answering within PROBE_MS. */
async function probeUntil(world: World, url: string, done: (answer: Awaited<ReturnType<typeof probe>>) => boolean) {
  return eventually(
    async () => {
      const answer = await probe(world, url);
      expect(answer.ms).toBeLessThan(PROBE_MS);
      return done(answer) ? answer : null;
    },
    `${url} to change`,
    NOTICED_MS,
    50,
  );
}

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
      expect(await probe(world, '/readyz', host)).toMatchObject({ status: 200, body: { status: 'ready', clusters: { default: 'up' } } });
    }
    expect((await world.app.inject({ method: 'POST', url: '/readyz' })).statusCode).toBe(404);
  });

  it('/readyz is a 503 naming the database while MongoDB does not answer, never waiting on it; /livez stays 200; ready again once it answers', async () => {
    relay.silence();
    try {
      const missing = await probeUntil(world, '/readyz', (answer) => answer.status === 503);
      expect(missing.body).toEqual({ error: 'Service unavailable', missing: ['database'], clusters: { default: 'down' } });
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

  it('/readyz is a 503 naming temporal once its check did not answer, never waiting on it; /livez stays 200', async () => {
    const missing = await probeUntil(world, '/readyz', (answer) => answer.status === 503);
    expect(missing.body).toEqual({ error: 'Service unavailable', missing: ['temporal'], clusters: { default: 'up' } });
    expect((await probe(world, '/healthz')).body).toMatchObject({ status: 'degraded', engines: { database: 'up', temporal: 'down' }, missing: ['temporal'] });
    expect(await probe(world, '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});

describe('the probes with two clusters, the second reached through a relay the test can silence', () => {
  let relay: TcpRelay;
  let world: World;
  const engineUp = async (cluster: string) =>
    (await world.services.metrics.registry.metrics()).match(new RegExp(`cwb_engine_up\\{engine="database",cluster="${cluster}"\\} (\\d)`))?.[1];
  beforeAll(async () => {
    relay = await startTcpRelay(new URL(mongoUri).host);
    world = await startWorld({ env: { MONGODB_CLUSTERS: `far-1=mongodb://${relay.address}/?directConnection=true` } });
  });
  afterAll(async () => {
    relay?.restore();
    await world?.close();
    await relay?.close();
  });

  it('reports each cluster by label in /healthz, /readyz and cwb_engine_up; another cluster down is degraded, not unready', async () => {
    await probeUntil(world, '/healthz', (answer) => answer.body.status === 'ok');
    expect((await probe(world, '/healthz')).body).toEqual({
      status: 'ok',
      engines: { database: 'up', temporal: 'up' },
      clusters: { default: 'up', 'far-1': 'up' },
      missing: [],
    });
    expect((await probe(world, '/readyz')).body).toEqual({ status: 'ready', clusters: { default: 'up', 'far-1': 'up' } });
    expect(await engineUp('default')).toBe('1');
    expect(await engineUp('far-1')).toBe('1');

    relay.silence();
    try {
      const degraded = await probeUntil(world, '/healthz', (answer) => answer.body.status === 'degraded');
      expect(degraded.body).toEqual({
        status: 'degraded',
        engines: { database: 'up', temporal: 'up' },
        clusters: { default: 'up', 'far-1': 'down' },
        missing: ['database:far-1'],
      });
      // Only the workspaces placed there are refused: the process stays in service.
      expect(await probe(world, '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', clusters: { default: 'up', 'far-1': 'down' } } });
      expect(await engineUp('far-1')).toBe('0');
      expect(await engineUp('default')).toBe('1');
    } finally {
      relay.restore();
    }
    await probeUntil(world, '/healthz', (answer) => answer.body.status === 'ok');
    expect(await engineUp('far-1')).toBe('1');
  });
});
