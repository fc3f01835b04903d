import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { socketGet } from '../support/listening-gateway.ts';
import { eventually } from '../support/polling.ts';
import { isLoopback, requestHost } from '../../services/core/tenants.ts';

/**
 * `Host: localhost` (and 127.0.0.1, [::1]) means the default (platform) site only to a client on
 * this machine: the TCP peer is loopback, or the gateway listens on loopback only. Through a
 * public listener anyone else gets the unknown-host 404, on the full path and in the lanes.
 */
describe('the local host names', () => {
  it('map to the default site only for a loopback peer or a loopback-only listener', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost']) expect(isLoopback(address), address).toBe(true);
    for (const address of ['10.0.0.1', '203.0.113.7', '::ffff:10.0.0.1', '0.0.0.0', '::', '2001:db8::1', '128.0.0.1', '', undefined])
      expect(isLoopback(address), String(address)).toBe(false);
    for (const host of ['localhost', 'LOCALHOST:3000', '127.0.0.1:80', '[::1]:3000']) {
      expect(requestHost(host, '127.0.0.1', '0.0.0.0'), host).not.toBe('');
      expect(requestHost(host, '::1', '::'), host).not.toBe('');
      expect(requestHost(host, '203.0.113.7', '0.0.0.0'), host).toBe('');
      expect(requestHost(host, '::ffff:10.0.0.1', '::'), host).toBe('');
      expect(requestHost(host, undefined, '0.0.0.0'), host).toBe('');
      // A gateway bound to loopback has no peer elsewhere (an `npm start` default, the tests' inject).
      expect(requestHost(host, '203.0.113.7', '127.0.0.1'), host).not.toBe('');
    }
    // Other names are not affected by the peer.
    expect(requestHost('blog.example.test:8080', '203.0.113.7', '0.0.0.0')).toBe('blog.example.test');
  });
});

describe('a gateway on a public listener', () => {
  let world: World;
  let port = 0;
  beforeAll(async () => {
    world = await startWorld({ env: { HOST: '0.0.0.0' } });
    // The test itself listens on loopback only; the config says the gateway would listen publicly.
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    const address = world.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => world?.close());

  it('answers 404 to Host: localhost from elsewhere, and serves it over loopback', async () => {
    for (const host of ['localhost', '127.0.0.1:3000', '[::1]']) {
      for (const remoteAddress of ['203.0.113.7', '10.1.2.3', '::ffff:192.168.1.9', '2001:db8::5']) {
        const res = await world.app.inject({ method: 'GET', url: '/api/v1/content', headers: { host }, remoteAddress });
        expect(res.statusCode, `${host} from ${remoteAddress}`).toBe(404);
        expect(res.json()).toEqual({ error: 'Unknown site' });
      }
      for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
        const res = await world.app.inject({ method: 'GET', url: '/api/v1/content', headers: { host }, remoteAddress });
        expect(res.statusCode, `${host} from ${remoteAddress}`).toBe(200);
      }
    }
    // Signing in to the platform site from elsewhere finds no site either.
    const login = await world.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { host: 'localhost', origin: 'http://localhost' },
      payload: world.admin,
      remoteAddress: '203.0.113.7',
    });
    expect(login.statusCode).toBe(404);
    expect(login.headers['set-cookie']).toBeUndefined();
    // Over a real loopback connection (through the lanes' server) it works.
    expect((await socketGet(port, '/api/v1/content')).statusCode).toBe(200);
  });

  it('the public lane in front of Fastify applies the same rule', async () => {
    const lane = world.app.publicLane;
    // Read until the lane holds the answer (the feed settles the site's state a poll later).
    await eventually(
      async () => {
        const before = lane.answered;
        await socketGet(port, '/api/v1/content?limit=3');
        return lane.answered > before ? true : undefined;
      },
      'a held public answer',
      20_000,
    );

    const fake = (remoteAddress: string) => {
      const written: number[] = [];
      const request = {
        method: 'GET',
        url: '/api/v1/content?limit=3',
        headers: { host: 'localhost' },
        socket: { remoteAddress },
      } as unknown as IncomingMessage;
      const response = { writeHead: (status: number) => written.push(status), end: () => undefined, statusCode: 200 } as unknown as ServerResponse;
      return { answered: lane.answer(request, response), written };
    };
    const remote = fake('203.0.113.7');
    expect(remote.answered).toBe(false);
    expect(remote.written).toEqual([]);
    const local = fake('127.0.0.1');
    expect(local.answered).toBe(true);
    expect(local.written).toEqual([200]);
  });
});
