import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createContext, type OperationContext } from '../../services/core/context.ts';
import { invokeOperation, type Operation } from '../../services/core/operation.ts';
import type { Principal } from '../../services/core/principal.ts';
import { CAPABILITIES, type Capability } from '../../services/core/capabilities.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { eventCollections } from '../../services/events/model.ts';
import { accessCollections } from '../../services/access/model.ts';
import { topics } from '../../services/core/topics.ts';
import { attemptsOf, attemptsTo } from '../../services/events/history.ts';
import type { WebhookOptions } from '../../services/events/settings.ts';
import { startWorld, type World, type WorldOptions } from '../support/world.ts';

/**
 * The user `adminPrincipal()` and `keyPrincipal()` act as: an administrator of the default site,
 * stored, because an endpoint gets an event only while its creator holds the right to read it.
 */
export const TEST_ADMIN_ID = 'admin-user';

/** A world whose webhooks may reach loopback receivers, with test-sized backoff and timeouts. */
export async function startWebhookWorld(options: WorldOptions & { webhooks?: WebhookOptions } = {}): Promise<World> {
  const { webhooks, ...rest } = options;
  const world = await startWorld({
    ...rest,
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...rest.env },
    webhooks: {
      retry: { initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 4_000, maximumAttempts: 6 },
      attemptTimeoutMs: 3_000,
      heartbeatTimeoutMs: 5_000,
      drainIntervalMs: 1_000,
      ...webhooks,
    },
  });
  const ctx = await contextFor(world, adminPrincipal());
  const now = new Date();
  await accessCollections(ctx.db).users.insertOne({
    _id: TEST_ADMIN_ID,
    siteId: ctx.site._id,
    email: 'webhook-admin@example.test',
    name: 'Webhook admin',
    role: 'administrator',
    policy: {},
    platformOperator: false,
    passwordHash: 'unused',
    createdAt: now,
    updatedAt: now,
  });
  return world;
}

/**
 * Stores an active API key row with this id for the test administrator, so an endpoint a
 * `keyPrincipal(keyId)` made gets deliveries (its creator exists and holds `capabilities`).
 */
export async function storeKey(world: World, keyId: string, capabilities: Capability[] = [...CAPABILITIES]) {
  const ctx = await contextFor(world, adminPrincipal());
  const now = new Date();
  await accessCollections(ctx.db).apiKeys.insertOne({
    _id: keyId,
    siteId: ctx.site._id,
    name: keyId,
    lookup: randomBytes(6).toString('hex'),
    secretHash: 'unused',
    ownerId: TEST_ADMIN_ID,
    capabilities,
    scope: {},
    allowedIps: [],
    allowedOrigins: [],
    expiresAt: null,
    rateLimitPerMin: null,
    status: 'active',
    createdAt: now,
    updatedAt: now,
    rotatedAt: null,
    revokedAt: null,
  });
  // Like a key operation: publishers drop the rights they hold for the site.
  await world.services.changeFeed.publish(topics.siteAccess(ctx.site._id));
}

export const adminPrincipal = (): Principal => ({
  kind: 'user',
  userId: TEST_ADMIN_ID,
  sessionId: 'session',
  capabilities: new Set<Capability>(CAPABILITIES),
  isPlatformOperator: false,
});

export const keyPrincipal = (keyId: string, capabilities: Capability[] = [...CAPABILITIES]): Principal => ({
  kind: 'key',
  keyId,
  userId: TEST_ADMIN_ID,
  capabilities: new Set(capabilities),
  scope: {},
  isPlatformOperator: false,
});

export async function contextFor(world: World, principal: Principal): Promise<OperationContext> {
  const scope = await createSiteResolver(world.services).resolve('localhost');
  if (!scope) throw new Error('default site missing');
  return createContext(world.services, scope, principal, { id: 'test', ip: '127.0.0.1' });
}

export async function call<T extends Operation>(world: World, op: T, input: unknown, principal: Principal = adminPrincipal()) {
  return invokeOperation(op, await contextFor(world, principal), input) as Promise<Awaited<ReturnType<T['handler']>>>;
}

/** Status and message of a failed call, to assert `{ error }` answers without HTTP. */
export async function failure(promise: Promise<unknown>): Promise<{ status: number; error: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { status?: number; message: string };
    return { status: e.status ?? 500, error: e.message };
  }
  throw new Error('expected the call to fail');
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A local webhook receiver; `respond` decides each answer (status, delay) from the request. */
export async function startReceiver(respond: (req: Received, index: number) => { status?: number; delayMs?: number } = () => ({})) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      const { status = 200, delayMs = 0 } = respond(entry, received.length - 1);
      const answer = () => {
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      };
      if (delayMs) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function siteDb(world: World) {
  const ctx = await contextFor(world, adminPrincipal());
  return {
    ctx,
    ...eventCollections(ctx.db),
    /** The history rows of a delivery (attempt order) or of an endpoint (oldest first), whatever their storage. */
    historyOf: (deliveryId: string) => attemptsOf(ctx.db, ctx.site._id, [deliveryId]),
    historyTo: (endpointId: string) => attemptsTo(ctx.db, ctx.site._id, [endpointId]),
  };
}

/** Emits an event as an operation would. */
export async function emit(world: World, event: string, data: Record<string, unknown>) {
  const ctx = await contextFor(world, adminPrincipal());
  await ctx.emit(event, data);
}
