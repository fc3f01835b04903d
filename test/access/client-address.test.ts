import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { clientAddress, parseProxyTrust, trustsProxy, type ProxyTrust } from '../../services/core/proxy-trust.ts';

const trustOf = (text: string): ProxyTrust => {
  const trust = parseProxyTrust(text);
  if ('error' in trust) throw new Error(trust.error);
  return trust;
};

const cases: Array<[setting: string, peer: string, forwardedFor: string | undefined, client: string]> = [
  // Nobody trusted: the header is ignored whatever it says.
  ['false', '127.0.0.1', '10.9.9.9', '127.0.0.1'],
  ['false', '127.0.0.1', undefined, '127.0.0.1'],
  // A listed proxy names the client; a peer outside the list does not.
  ['127.0.0.1', '127.0.0.1', '10.9.9.9', '10.9.9.9'],
  ['10.0.0.2', '127.0.0.1', '10.9.9.9', '127.0.0.1'],
  // The client's own forged entries stop at the first hop that is not a trusted proxy.
  ['172.28.0.0/24', '172.28.0.10', '10.9.9.9, 203.0.113.7', '203.0.113.7'],
  ['172.28.0.0/24', '172.28.0.10', '10.9.9.9, 172.28.0.11, 203.0.113.7', '203.0.113.7'],
  ['172.28.0.0/24,203.0.113.7', '172.28.0.10', '10.9.9.9,203.0.113.7', '10.9.9.9'],
  ['172.28.0.0/24', '::ffff:172.28.0.10', '198.51.100.4', '198.51.100.4'],
  ['fd00:1::/64', 'fd00:1::2', '2001:db8::9', '2001:db8::9'],
  ['fd00:1::/64', 'fd00:2::2', '2001:db8::9', 'fd00:2::2'],
  ['127.0.0.1', '127.0.0.1', ' , 10.1.1.1 ,\t', '10.1.1.1'],
  ['127.0.0.1', '127.0.0.1', '', '127.0.0.1'],
  // A hop count trusts that many peers, whoever they are.
  ['1', '127.0.0.1', '10.9.9.9, 203.0.113.7', '203.0.113.7'],
  ['2', '127.0.0.1', '10.9.9.9, 203.0.113.7', '10.9.9.9'],
  ['3', '127.0.0.1', '10.9.9.9, 203.0.113.7', '10.9.9.9'],
];

describe('client address (TRUST_PROXY)', () => {
  it.each(cases)('TRUST_PROXY=%s, peer %s, X-Forwarded-For %j → %s, the same for Fastify and the lanes', async (setting, peer, forwardedFor, client) => {
    const trusts = trustsProxy(trustOf(setting));
    const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
    expect(clientAddress({ headers, socket: { remoteAddress: peer } } as never, trusts)).toBe(client);

    const app = Fastify({ trustProxy: trusts });
    app.get('/', async (request) => ({ ip: request.ip }));
    const response = await app.inject({ url: '/', remoteAddress: peer, headers });
    expect(response.json()).toEqual({ ip: client });
    await app.close();
  });

  it('believes X-Forwarded-Proto and -Host only from a trusted peer', async () => {
    for (const [setting, https] of [
      ['127.0.0.1', true],
      ['10.0.0.2', false],
      ['false', false],
    ] as const) {
      const app = Fastify({ trustProxy: trustsProxy(trustOf(setting)) });
      app.get('/', async (request) => ({ protocol: request.protocol, host: request.host }));
      const response = await app.inject({ url: '/', headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'example.test', host: 'localhost' } });
      expect(response.json()).toEqual(https ? { protocol: 'https', host: 'example.test' } : { protocol: 'http', host: 'localhost' });
      await app.close();
    }
  });
});
