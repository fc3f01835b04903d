import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { isPublicAddress } from '../../services/events/addresses.ts';
import { createWebhookSecretBox, secretBinding } from '../../services/events/secrets.ts';
import { newId } from '../../services/core/ids.ts';
import { topics } from '../../services/core/topics.ts';
import type { ResolvedAddress } from '../../services/events/target-guard.ts';
import { call, emit, failure, siteDb, startReceiver, startWebhookWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

const createEndpoint = adminEndpoints.create;

/** DNS the test controls: names can change their answer between save and delivery. */
const dns = new Map<string, ResolvedAddress[]>();
const resolve = async (host: string) => {
  const answer = dns.get(host);
  if (!answer) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answer;
};
const v4 = (address: string): ResolvedAddress[] => [{ address, family: 4 }];
const v6 = (address: string): ResolvedAddress[] => [{ address, family: 6 }];

dns.set('public.example.test', v4('93.184.216.34'));
dns.set('loopback.example.test', v4('127.0.0.1'));
dns.set('private.example.test', v4('10.1.2.3'));
dns.set('metadata.example.test', v4('169.254.169.254'));
dns.set('v6-loopback.example.test', v6('::1'));
dns.set('v6-ula.example.test', v6('fd00::5'));
dns.set('mapped.example.test', v6('::ffff:192.168.0.1'));
// One public and one private answer: refused, because a later connection could pick either.
dns.set('mixed.example.test', [...v4('93.184.216.34'), ...v4('192.168.1.20')]);

const REFUSED_URLS = [
  'https://127.0.0.1/hook',
  'https://127.1.2.3/hook',
  'https://0.0.0.0/hook',
  'https://10.0.0.1/hook',
  'https://172.16.5.4/hook',
  'https://172.31.255.255/hook',
  'https://192.168.1.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://100.64.0.1/hook',
  'https://0x7f000001/hook', // 127.0.0.1 in hex
  'https://2130706433/hook', // 127.0.0.1 as one number
  'https://017700000001/hook', // 127.0.0.1 in octal
  'https://[::1]/hook',
  'https://[::]/hook',
  'https://[fe80::1]/hook',
  'https://[fc00::1]/hook',
  'https://[fd12:3456:789a::1]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:10.0.0.1]/hook',
  'https://[::ffff:a9fe:a9fe]/hook', // mapped 169.254.169.254 in hex
  'https://[64:ff9b::7f00:1]/hook', // NAT64 of 127.0.0.1
  'https://[2002:c0a8:101::1]/hook', // 6to4 of 192.168.1.1
  'https://[64:ff9b:1::808:808]/hook', // local-use NAT64
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', // Teredo
  'https://[::ffff:0:7f00:1]/hook', // SIIT-translated 127.0.0.1
  'https://192.88.99.1/hook', // 6to4 relay anycast
  'https://[ff02::1]/hook',
  'https://loopback.example.test/hook',
  'https://private.example.test/hook',
  'https://metadata.example.test/hook',
  'https://v6-loopback.example.test/hook',
  'https://v6-ula.example.test/hook',
  'https://mapped.example.test/hook',
  'https://mixed.example.test/hook',
  'https://unknown.example.test/hook',
];

describe('SSRF guard', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, webhooks: { resolve } });
  });
  afterAll(() => world?.close());

  it('classifies addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '2a00:1450::1', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
    for (const address of [
      '127.0.0.1',
      '10.9.9.9',
      '192.168.0.1',
      '172.20.0.1',
      '169.254.1.1',
      '::1',
      '::',
      'fe80::abcd%eth0',
      'fc00::',
      'fdff::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::127.0.0.1',
      '64:ff9b::a00:1',
      '2002:7f00:1::',
      'not-an-ip',
      '224.0.0.1',
      '255.255.255.255',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('refuses every block of the IANA special-purpose registries that is not globally reachable unicast', () => {
    const refused = [
      // IPv4: this network, private, CGNAT (both ends), loopback, link-local, protocol assignments,
      // documentation, 6to4 relay anycast, benchmarking (both /16s of the /15), multicast, reserved, broadcast.
      '0.0.0.0',
      '0.1.2.3',
      '10.255.255.255',
      '100.64.0.0',
      '100.127.255.255',
      '127.255.255.254',
      '169.254.169.254',
      '192.0.0.9',
      '192.0.0.170',
      '192.0.2.1',
      '192.88.99.1',
      '192.88.99.255',
      '198.18.0.1',
      '198.19.255.255',
      '198.51.100.7',
      '203.0.113.9',
      '224.0.0.251',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      // IPv4-mapped, IPv4-compatible and SIIT-translated (::ffff:0:0:0/96) forms, public or not.
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '::ffff:0:808:808',
      '::ffff:0:7f00:1',
      '::ffff:0:0:0',
      '::8.8.8.8',
      '::1',
      '::',
      // NAT64: the well-known prefix with an internal address, the local-use prefix whatever it embeds.
      '64:ff9b::7f00:1',
      '64:ff9b::c0a8:101',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::808:808',
      '64:ff9b:1:ffff::1',
      // Discard-only, dummy prefix, Teredo and the rest of 2001::/23, documentation, SRv6.
      '100::1',
      '100::1:0:0:1',
      '100:0:0:1::1',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001:1::1',
      '2001:2::5',
      '2001:10::1',
      '2001:1ff:ffff::1',
      '2001:db8::1',
      '3fff::1',
      '3fff:fff::1',
      '5f00::1',
      // 6to4 of internal IPv4 addresses (10.0.0.1, 127.0.0.1, 192.168.1.1, 100.64.0.1).
      '2002:a00:1::1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
      '2002:6440:1::1',
      // Unique-local, link-local (with a zone), old site-local, multicast, other unassigned space.
      'fc00::1',
      'fdff:ffff::1',
      'fe80::1',
      'fe80::1%eth0',
      'febf::1',
      'fec0::1',
      'ff02::1',
      'ff0e::1',
      '4000::1',
      'e000::1',
      '1::1',
    ];
    for (const address of refused) expect(isPublicAddress(address), address).toBe(false);
    // Public neighbours of those blocks stay reachable.
    const allowed = [
      '100.63.255.255',
      '100.128.0.0',
      '192.88.98.255',
      '192.88.100.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      '64:ff9b::808:808',
      '::ffff:8.8.8.8',
      '2002:808:808::1',
      '2001:200::1',
      '2001:4860:4860::8888',
      '2001:db9::1',
      '3fff:1000::1',
      '2600::1',
    ];
    for (const address of allowed) expect(isPublicAddress(address), address).toBe(true);
  });

  it('refuses every internal target when saved (400) and stores nothing', async () => {
    const { endpoints } = await siteDb(world);
    const before = await endpoints.countDocuments();
    for (const url of REFUSED_URLS) {
      const result = await failure(call(world, createEndpoint, { name: 'bad', url, events: ['content.created'] }));
      expect(result.status, url).toBe(400);
      expect(result.error, url).toMatch(/^url: /);
    }
    expect(await endpoints.countDocuments()).toBe(before);
    // The public name is accepted.
    await call(world, createEndpoint, { name: 'good', url: 'https://public.example.test/hook', events: ['content.created'] });
  });

  it('refuses them again at delivery (endpoints that slipped past the save check), without connecting', async () => {
    // Rows written directly, as if saved before a rule existed: the delivery-time check must hold alone.
    const { endpoints, deliveries, historyOf, ctx } = await siteDb(world);
    const box = createWebhookSecretBox(world.config.SECRET_KEY);
    // An unresolvable name is refused at save; at delivery it is a retried failure (DNS may recover).
    const internal = REFUSED_URLS.filter((url) => !url.includes('unknown.example.test'));
    const ids = internal.map(() => newId());
    await endpoints.insertMany(
      internal.map((url, i) => ({
        _id: ids[i],
        siteId: ctx.site._id,
        name: `legacy ${i}`,
        url,
        events: ['user.created'],
        active: true,
        secretEnc: box.seal('whsec_legacy', secretBinding(ctx.site._id, ids[i])),
        ownerKeyId: null,
        createdBy: null,
        createdAt: new Date(),
        updatedAt: new Date(),
      })),
    );
    // Publishers hold the site's endpoints in memory: a writer other than the endpoint operations
    // announces its change the same way (services/events/endpoints.ts).
    await world.services.changeFeed.publish(topics.webhookEndpoints(ctx.site._id));
    await emit(world, 'user.created', { id: 'u1', email: 'a@b.test', role: 'editor' });
    const rows = await eventually(
      async () => {
        const done = await deliveries.find({ endpointId: { $in: ids }, status: 'failed' }).toArray();
        return done.length === ids.length && done;
      },
      `refused deliveries ${JSON.stringify(
        await deliveries
          .find({ endpointId: { $in: ids } })
          .project({ status: 1, error: 1, attempts: 1 })
          .limit(3)
          .toArray(),
      )}`,
      30_000,
    );
    for (const row of rows) {
      expect(row.attempts).toBe(1); // refused for good: no retries
      const history = await historyOf(row._id);
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ status: 'blocked', responseCode: null });
      expect(history[0].error).toMatch(/^url: /);
    }
  });

  it('refuses a name that resolved public when saved and private at delivery (DNS rebinding)', async () => {
    const receiver = await startReceiver();
    try {
      dns.set('rebind.example.test', v4('93.184.216.34'));
      const { endpoint } = await call(world, createEndpoint, { name: 'rebind', url: 'https://rebind.example.test/hook', events: ['media.deleted'] });
      dns.set('rebind.example.test', v4('127.0.0.1'));
      await emit(world, 'media.deleted', { id: 'm', filename: 'x.png' });
      const { deliveries, historyOf } = await siteDb(world);
      const row = await eventually(async () => (await deliveries.findOne({ endpointId: endpoint.id, status: 'failed' })) ?? undefined, 'refused', 20_000);
      const [history] = await historyOf(row._id);
      expect(history).toMatchObject({ status: 'blocked', error: 'url: private, loopback and link-local addresses are not allowed' });
      expect(receiver.received).toHaveLength(0);
    } finally {
      dns.delete('rebind.example.test');
      await receiver.close();
    }
  });
});

describe('SSRF guard with private targets allowed (tests, local development)', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true, webhooks: { resolve } });
  });
  afterAll(() => world?.close());

  it('connects to the address that was checked, not to a second DNS answer', async () => {
    const receiver = await startReceiver();
    try {
      // The system resolver does not know this name; only the vetted answer can lead to the receiver.
      dns.set('pinned.example.test', v4('127.0.0.1'));
      const { endpoint } = await call(world, createEndpoint, {
        name: 'pinned',
        url: `http://pinned.example.test:${receiver.port}/hook`,
        events: ['content.deleted'],
      });
      await emit(world, 'content.deleted', { id: 'c', type: 'post', slug: 's', locale: 'en' });
      await eventually(async () => receiver.received.length === 1, 'receipt', 20_000);
      expect(receiver.received[0].headers.host).toBe(`pinned.example.test:${receiver.port}`);
      const { deliveries } = await siteDb(world);
      await eventually(async () => (await deliveries.findOne({ endpointId: endpoint.id }))?.status === 'delivered', 'delivered', 10_000);
    } finally {
      await receiver.close();
    }
  });

  it('does not follow redirects', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 302 }));
    try {
      const { endpoint } = await call(world, createEndpoint, { name: 'redirect', url: redirecting.url, events: ['plugin.deactivated'] });
      await emit(world, 'plugin.deactivated', { id: 'seo' });
      const { historyTo } = await siteDb(world);
      const first = await eventually(async () => (await historyTo(endpoint.id)).find((attempt) => attempt.status === 'failed'), 'attempt', 20_000);
      expect(first).toMatchObject({ responseCode: 302, error: 'HTTP 302 (redirects are not followed)' });
      expect(target.received).toHaveLength(0);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
    }
  });
});
