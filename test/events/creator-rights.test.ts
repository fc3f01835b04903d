import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/world.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { createApiKey, signIn } from '../support/access.ts';
import { eventually } from '../support/polling.ts';
import { emit, siteDb, startReceiver, startWebhookWorld } from './support.ts';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * An endpoint gets an event only while the key, grant or user that made it still holds the
 * capability that reads the event (docs/webhooks.md, "Who may receive what"): real keys, users and
 * sessions, changed through their own routes, and loopback receivers.
 */
describe("webhook endpoints follow their creator's rights", () => {
  let world: World;
  let manager: string;
  let admin: { cookie: string; origin: string };
  const receivers: Receiver[] = [];
  const password = 'correct horse battery staple';
  const asKey = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    world = await startWebhookWorld({ worker: true });
    ({ key: manager } = await createApiKey(world, { capabilities: [...CAPABILITIES], name: 'manager' }));
    admin = await signIn(world);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await world?.close();
  });

  async function createUser(email: string, role: string): Promise<string> {
    const response = await world.app.inject({ method: 'POST', url: '/api/manage/v1/users', headers: asKey(manager), payload: { email, password, role } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().id;
  }
  const setRole = async (id: string, role: string) => {
    const response = await world.app.inject({ method: 'PATCH', url: `/api/manage/v1/users/${id}`, headers: asKey(manager), payload: { role } });
    expect(response.statusCode, response.body).toBe(200);
  };
  async function endpoint(headers: Record<string, string>, path: string, events: string[], respond?: Parameters<typeof startReceiver>[0]) {
    const receiver = await startReceiver(respond);
    receivers.push(receiver);
    const response = await world.app.inject({ method: 'POST', url: path, headers, payload: { name: `to ${receiver.port}`, url: receiver.url, events } });
    expect(response.statusCode, response.body).toBe(201);
    return { id: response.json().endpoint.id as string, receiver };
  }
  /** The ids (data.id) of the events a receiver got. */
  const got = (receiver: Receiver) => receiver.received.map((r) => JSON.parse(r.body).data.id as string);

  it("stops delivering when the key is revoked or the owner's role narrowed, keeps delivering to the others, and resumes when the right is back", async () => {
    const owner = 'owner@creator-rights.test';
    const narrowed = 'narrowed@creator-rights.test';
    await createUser(owner, 'administrator');
    const narrowedId = await createUser(narrowed, 'administrator');
    const reads = ['settings:manage', 'users:read', 'content:read'] as const;
    const revoked = await createApiKey(world, { capabilities: [...reads], name: 'to revoke', ownerEmail: owner });
    const kept = await createApiKey(world, { capabilities: [...reads], name: 'kept', ownerEmail: owner });
    const ofNarrowed = await createApiKey(world, { capabilities: [...reads], name: 'of the narrowed user', ownerEmail: narrowed });
    const session = await signIn(world, narrowed, password);

    const byRevokedKey = await endpoint(asKey(revoked.key), '/api/manage/v1/webhooks', ['user.created']);
    const byKeptKey = await endpoint(asKey(kept.key), '/api/manage/v1/webhooks', ['user.created']);
    const byNarrowedKey = await endpoint(asKey(ofNarrowed.key), '/api/manage/v1/webhooks', ['user.created', 'content.created']);
    const byNarrowedSession = await endpoint({ cookie: session.cookie, origin: session.origin }, '/api/webhooks', ['user.created']);
    const all = [byRevokedKey, byKeptKey, byNarrowedKey, byNarrowedSession];
    const { endpoints, deliveries } = await siteDb(world);
    expect(await endpoints.findOne({ _id: byNarrowedSession.id })).toMatchObject({ ownerKeyId: null, createdBy: narrowedId });

    await emit(world, 'user.created', { id: 'probe-1', email: 'p1@example.test', role: 'viewer' });
    await eventually(async () => all.every((e) => got(e.receiver).includes('probe-1')), 'every endpoint receives while its creator may read', 20_000);

    // The key cut off, and the other user's role narrowed to one that reads content but not users.
    const revokedAnswer = await world.app.inject({
      method: 'POST',
      url: `/api/api-keys/${revoked.id}/revoke`,
      headers: { cookie: admin.cookie, origin: admin.origin },
    });
    expect(revokedAnswer.statusCode, revokedAnswer.body).toBe(200);
    await setRole(narrowedId, 'author');

    await emit(world, 'user.created', { id: 'probe-2', email: 'p2@example.test', role: 'viewer' });
    await emit(world, 'content.created', { id: 'entry-2', type: 'post', slug: 's', locale: 'en', status: 'draft', version: '1' });
    // The rows are stored before the emit returns: none was stored for the endpoints cut off.
    const storedFor = async (id: string) => (await deliveries.find({ endpointId: id }).toArray()).map((row) => JSON.parse(row.body).data.id as string);
    expect(await storedFor(byRevokedKey.id)).toEqual(['probe-1']);
    expect(await storedFor(byNarrowedSession.id)).toEqual(['probe-1']);
    expect((await storedFor(byNarrowedKey.id)).sort()).toEqual(['entry-2', 'probe-1']);
    await eventually(
      async () => got(byKeptKey.receiver).includes('probe-2') && got(byNarrowedKey.receiver).includes('entry-2'),
      'the endpoints that still may read',
      20_000,
    );
    // (Given time to arrive, had they been sent.)
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(got(byRevokedKey.receiver)).toEqual(['probe-1']);
    expect(got(byNarrowedSession.receiver)).toEqual(['probe-1']);
    expect(got(byNarrowedKey.receiver).sort()).toEqual(['entry-2', 'probe-1']);

    // The administrators see why: what each endpoint does not receive now.
    const listed = await world.app.inject({ method: 'GET', url: '/api/webhooks?limit=200', headers: { cookie: admin.cookie } });
    const withheld = new Map(listed.json().data.map((e: { id: string; withheldEvents: string[] }) => [e.id, e.withheldEvents]));
    expect(withheld.get(byRevokedKey.id)).toEqual(['user.created']);
    expect(withheld.get(byNarrowedKey.id)).toEqual(['user.created']);
    expect(withheld.get(byNarrowedSession.id)).toEqual(['user.created']);
    expect(withheld.get(byKeptKey.id)).toEqual([]);

    // The right back (the role restored): the user's key and session endpoints receive again.
    await setRole(narrowedId, 'administrator');
    await emit(world, 'user.created', { id: 'probe-3', email: 'p3@example.test', role: 'viewer' });
    await eventually(
      async () => [byKeptKey, byNarrowedKey, byNarrowedSession].every((e) => got(e.receiver).includes('probe-3')),
      'the restored endpoints',
      20_000,
    );
    expect(await storedFor(byRevokedKey.id)).toEqual(['probe-1']);
  }, 90_000);

  it('stops delivering to an endpoint whose creator was deleted', async () => {
    const email = 'deleted@creator-rights.test';
    const id = await createUser(email, 'editor');
    const session = await signIn(world, email, password);
    // An editor reads users but does not manage settings: give the endpoint to it through its policy.
    await world.app.inject({
      method: 'PATCH',
      url: `/api/manage/v1/users/${id}`,
      headers: asKey(manager),
      payload: { policy: { grant: ['settings:manage'] } },
    });
    const made = await endpoint({ cookie: session.cookie, origin: session.origin }, '/api/webhooks', ['user.updated']);
    const { deliveries } = await siteDb(world);
    const removed = await world.app.inject({ method: 'DELETE', url: `/api/manage/v1/users/${id}`, headers: asKey(manager) });
    expect(removed.statusCode, removed.body).toBe(200);
    await emit(world, 'user.updated', { id: 'probe-4', email: 'p4@example.test', role: 'viewer' });
    expect(await deliveries.countDocuments({ endpointId: made.id })).toBe(0);
  });

  it('does not send what was stored before the loss: a retry after the key is revoked fails as withheld', async () => {
    const key = await createApiKey(world, { capabilities: ['settings:manage', 'content:read'], name: 'retrying' });
    // The receiver fails every attempt, so the delivery is waiting for a retry when the key is revoked.
    const made = await endpoint(asKey(key.key), '/api/manage/v1/webhooks', ['content.updated'], () => ({ status: 503 }));
    const { deliveries, historyOf } = await siteDb(world);
    await emit(world, 'content.updated', { id: 'retry-1', type: 'post', slug: 's', locale: 'en', status: 'draft', version: '2' });
    await eventually(async () => made.receiver.received.length >= 1, 'the first attempt', 20_000);
    const revokedAnswer = await world.app.inject({
      method: 'POST',
      url: `/api/api-keys/${key.id}/revoke`,
      headers: { cookie: admin.cookie, origin: admin.origin },
    });
    expect(revokedAnswer.statusCode).toBe(200);
    const sentBefore = made.receiver.received.length;
    const row = await eventually(
      async () => {
        const found = await deliveries.findOne({ endpointId: made.id });
        return found?.status === 'failed' && found;
      },
      'the withheld delivery',
      30_000,
    );
    expect(row.error).toBe("withheld: the endpoint's creator no longer holds content:read");
    expect(row.attempts).toBeLessThan(6);
    // A pass already sending when the key was revoked may have made one more attempt; none after.
    expect(made.receiver.received.length).toBeLessThanOrEqual(sentBefore + 1);
    const history = await historyOf(row._id);
    expect(history.at(-1)).toMatchObject({ status: 'failed', error: row.error });
    // Withholding says nothing about the receiver: the circuit breaker is not moved by it.
    expect(await (await siteDb(world)).endpoints.findOne({ _id: made.id })).toMatchObject({ pausedAt: null });
  });
});
