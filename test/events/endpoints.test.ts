import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { adminEndpoints, listEventsOp, manageEndpoints } from '../../services/events/endpoint-ops.ts';
import { createWebhookSecretBox, secretBinding } from '../../services/events/secrets.ts';
import { adminPrincipal, call, failure, keyPrincipal, siteDb, startWebhookWorld } from './support.ts';

const { list: keyList, create: keyCreate, update: keyUpdate, remove: keyDelete, rotateSecret: keyRotate } = manageEndpoints;
const { list: adminList, create: adminCreate, update: adminUpdate, remove: adminDelete, rotateSecret: adminRotate } = adminEndpoints;
const url = 'https://hooks.example.test/in';

describe('webhook endpoints', () => {
  let world: World;
  beforeAll(async () => {
    // Names resolve to a public address here; no request is ever sent in this file.
    world = await startWebhookWorld({
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
      webhooks: { resolve: async () => [{ address: '93.184.216.34', family: 4 }] },
    });
  });
  afterAll(() => world?.close());

  it('lists the event catalog: twenty-three core events with string-typed data, plus plugin events', async () => {
    const { events } = await call(world, listEventsOp, {}, keyPrincipal('any-key', []));
    expect(events).toHaveLength(23);
    for (const descriptor of events) {
      expect(typeof descriptor.description).toBe('string');
      for (const type of Object.values(descriptor.data)) expect(typeof type).toBe('string');
    }
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['content.created', 'core.updated', 'settings.updated', 'theme.installed']));

    const remove = world.services.hooks.addFilter<Array<Record<string, unknown>>>('webhook.eventTypes', (list) => [
      ...list,
      { event: 'shop.order.paid', description: 'An order was paid.', data: { orderId: 'string', total: 'number' } },
      { event: 'broken' }, // malformed: skipped, not fatal
    ]);
    try {
      const after = await call(world, listEventsOp, {}, keyPrincipal('any-key', []));
      expect(after.events).toHaveLength(24);
      // A plugin's event can be subscribed to while the plugin is active.
      const created = await call(world, keyCreate, { name: 'shop', url, events: ['shop.order.paid'] }, keyPrincipal('k-shop'));
      expect(created.endpoint.id).toBeTruthy();
    } finally {
      remove();
    }
    expect(await failure(call(world, keyCreate, { name: 'shop', url, events: ['shop.order.paid'] }, keyPrincipal('k-shop')))).toEqual({
      status: 400,
      error: 'events: unknown event shop.order.paid',
    });
  });

  it('creates with a whsec_ secret shown once and stored only encrypted', async () => {
    const result = await call(world, keyCreate, { name: 'Orders', url, events: ['content.published'] }, keyPrincipal('k-a'));
    expect(result.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const { endpoints, ctx } = await siteDb(world);
    const row = await endpoints.findOne({ _id: result.endpoint.id });
    expect(row).toMatchObject({ ownerKeyId: 'k-a', active: true, events: ['content.published'], url, siteId: ctx.site._id });
    expect(JSON.stringify(row)).not.toContain(result.secret);
    const box = createWebhookSecretBox(world.config.SECRET_KEY);
    expect(box.open(row!.secretEnc, secretBinding(ctx.site._id, row!._id))).toBe(result.secret);
    // Bound to its row: the same ciphertext does not open for another endpoint.
    expect(() => box.open(row!.secretEnc, secretBinding(ctx.site._id, 'other'))).toThrow();

    const list = await call(world, keyList, {}, keyPrincipal('k-a'));
    expect(list.data.map((e) => e.id)).toContain(result.endpoint.id);
    expect(JSON.stringify(list)).not.toContain('whsec_');
    expect(list.eventTypes).toContain('content.published');

    const rotated = await call(world, keyRotate, { id: result.endpoint.id }, keyPrincipal('k-a'));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(result.secret);
    const after = await endpoints.findOne({ _id: result.endpoint.id });
    expect(box.open(after!.secretEnc, secretBinding(ctx.site._id, after!._id))).toBe(rotated.secret);
  });

  it('refuses an invalid URL or an unknown event with 400, storing nothing', async () => {
    const { endpoints } = await siteDb(world);
    const before = await endpoints.countDocuments();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'x', url: 'not a url', events: ['content.created'] }, /^url: /],
      [{ name: 'x', url: 'http://hooks.example.test/', events: ['content.created'] }, /https/],
      [{ name: 'x', url: 'ftp://hooks.example.test/', events: ['content.created'] }, /https/],
      [{ name: 'x', url: 'https://user:pw@hooks.example.test/', events: ['content.created'] }, /credentials/],
      [{ name: 'x', url, events: ['content.exploded'] }, /unknown event content\.exploded/],
      [{ name: 'x', url, events: [] }, /^events/],
      [{ name: '', url, events: ['content.created'] }, /^name/],
      [{ url, events: ['content.created'] }, /^name/],
    ];
    for (const [input, message] of cases) {
      for (const [op, principal] of [
        [keyCreate, keyPrincipal('k-a')],
        [adminCreate, adminPrincipal()],
      ] as const) {
        const result = await failure(call(world, op, input, principal));
        expect(result.status, JSON.stringify(input)).toBe(400);
        expect(result.error).toMatch(message);
      }
    }
    expect(await endpoints.countDocuments()).toBe(before);
  });

  it("a key sees, changes and deletes only the endpoints it registered (not another key's, not an administrator's)", async () => {
    const mine = await call(world, keyCreate, { name: 'mine', url, events: ['media.uploaded'] }, keyPrincipal('k-owner'));
    const theirs = await call(world, keyCreate, { name: 'theirs', url, events: ['media.uploaded'] }, keyPrincipal('k-other'));
    const admins = await call(world, adminCreate, { name: 'admins', url, events: ['media.uploaded'] }, adminPrincipal());
    const { endpoints } = await siteDb(world);
    expect((await endpoints.findOne({ _id: admins.endpoint.id }))?.ownerKeyId).toBeNull();

    const seen = await call(world, keyList, { limit: 200 }, keyPrincipal('k-owner'));
    expect(seen.data.map((e) => e.id)).toEqual([mine.endpoint.id]);

    const snapshot = async () =>
      endpoints
        .find({ _id: { $in: [theirs.endpoint.id, admins.endpoint.id] } })
        .sort({ _id: 1 })
        .toArray();
    const before = await snapshot();
    for (const id of [theirs.endpoint.id, admins.endpoint.id]) {
      expect(await failure(call(world, keyUpdate, { id, name: 'hijack' }, keyPrincipal('k-owner')))).toEqual({ status: 404, error: 'Not found' });
      expect(await failure(call(world, keyUpdate, { id, url: 'https://evil.example.test/' }, keyPrincipal('k-owner')))).toMatchObject({ status: 404 });
      expect(await failure(call(world, keyDelete, { id }, keyPrincipal('k-owner')))).toEqual({ status: 404, error: 'Not found' });
      expect(await failure(call(world, keyRotate, { id }, keyPrincipal('k-owner')))).toEqual({ status: 404, error: 'Not found' });
    }
    expect(await snapshot()).toEqual(before);

    // Its own: update and delete work.
    const updated = await call(world, keyUpdate, { id: mine.endpoint.id, name: 'renamed', events: ['media.deleted'], active: false }, keyPrincipal('k-owner'));
    expect(updated.endpoint).toMatchObject({ name: 'renamed', events: ['media.deleted'], active: false, ownerKeyId: 'k-owner' });
    expect(await call(world, keyDelete, { id: mine.endpoint.id }, keyPrincipal('k-owner'))).toEqual({ id: mine.endpoint.id, deleted: true });
    expect(await endpoints.findOne({ _id: mine.endpoint.id })).toBeNull();

    // The administrator sees every endpoint, key-registered ones included, and manages them.
    const all = await call(world, adminList, { limit: 200 });
    expect(all.data.map((e) => e.id)).toEqual(expect.arrayContaining([theirs.endpoint.id, admins.endpoint.id]));
    await call(world, adminUpdate, { id: theirs.endpoint.id, active: false });
    await call(world, adminRotate, { id: admins.endpoint.id });
    await call(world, adminDelete, { id: theirs.endpoint.id });
    expect(await endpoints.findOne({ _id: theirs.endpoint.id })).toBeNull();
  });

  it('needs settings:manage for endpoints; any valid key reads the catalog', async () => {
    const weak = keyPrincipal('k-weak', ['content:read']);
    expect(await failure(call(world, keyList, {}, weak))).toEqual({ status: 403, error: 'Forbidden' });
    expect(await failure(call(world, keyCreate, { name: 'x', url, events: ['content.created'] }, weak))).toEqual({ status: 403, error: 'Forbidden' });
    expect(await failure(call(world, listEventsOp, {}, { kind: 'anonymous' }))).toEqual({ status: 401, error: 'Unauthorized' });
  });

  it('pages the list with signed cursors', async () => {
    for (let i = 0; i < 5; i++) await call(world, keyCreate, { name: `p${i}`, url, events: ['content.created'] }, keyPrincipal('k-pager'));
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(world, keyList, { limit: '2', ...(cursor ? { cursor } : {}) }, keyPrincipal('k-pager'));
      expect(page.page.total).toBe(page.data.length);
      ids.push(...page.data.map((e) => e.id));
      cursor = page.page.nextCursor ?? undefined;
    } while (cursor);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    expect(await failure(call(world, keyList, { cursor: 'garbage.sig' }, keyPrincipal('k-pager')))).toEqual({ status: 400, error: 'Invalid cursor' });
  });
});
