import { z } from 'zod';
import { assertSwitch, withinCountQuota } from '../tenancy/quota-guard.ts';
import { ListQuery, pageById } from '../core/paging.ts';
import type { Filter } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { topics } from '../core/topics.ts';
import { actorKeyId, actorUserId, hasCapability } from '../core/principal.ts';
import { eventReadRights } from './catalog.ts';
import { creatorOf, loadCreatorRights, mayRead } from './creator-rights.ts';
import { eventCollections, type EndpointDoc } from './model.ts';
import { generateWebhookSecret, secretBinding } from './secrets.ts';
import { DEFAULT_ENDPOINT_CONCURRENCY } from './settings.ts';
import { wakeActor } from './deliveries.ts';
import { TargetRejectedError } from './target-guard.ts';

export const EndpointInput = z.object({
  name: z.string().trim().min(1).max(200),
  url: z.string().max(2048),
  events: z.array(z.string().min(1).max(200)).min(1).max(100),
  active: z.boolean().optional(),
  /** Attempts in flight at once to this endpoint. */
  concurrency: z.number().int().min(1).max(32).optional(),
  /** Attempts started per second at most; null removes the limit. */
  maxPerSecond: z.number().int().min(1).max(1000).nullable().optional(),
});
export type EndpointInput = z.infer<typeof EndpointInput>;

export const EndpointView = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  ownerKeyId: z.string().nullable(),
  concurrency: z.number(),
  maxPerSecond: z.number().nullable(),
  /** Set when the circuit breaker paused the endpoint (nothing is sent until it is resumed). */
  pausedAt: z.string().nullable(),
  pauseReason: z.string().nullable(),
  /**
   * Subscribed events it does not receive now: its creator (the key, grant or user that made it)
   * no longer holds the capability that reads them. They flow again if the right comes back.
   */
  withheldEvents: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const toView = (doc: EndpointDoc, withheldEvents: string[]): z.infer<typeof EndpointView> => ({
  id: doc._id,
  name: doc.name,
  url: doc.url,
  events: doc.events,
  active: doc.active,
  ownerKeyId: doc.ownerKeyId,
  concurrency: doc.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
  maxPerSecond: doc.maxPerSecond ?? null,
  pausedAt: doc.pausedAt?.toISOString() ?? null,
  pauseReason: doc.pauseReason ?? null,
  withheldEvents,
  createdAt: doc.createdAt.toISOString(),
  updatedAt: doc.updatedAt.toISOString(),
});

/** The views of these endpoints, with what each creator's current rights withhold (one load for all). */
async function viewsOf(ctx: OperationContext, docs: EndpointDoc[]): Promise<Array<z.infer<typeof EndpointView>>> {
  if (docs.length === 0) return [];
  const [reads, creators] = await Promise.all([eventReadRights(ctx.services, ctx.site._id), loadCreatorRights(ctx.db, ctx.site._id, docs)]);
  const now = ctx.services.clock.now().getTime();
  return docs.map((doc) => {
    const rights = creators.get(creatorOf(doc));
    return toView(
      doc,
      doc.events.filter((event) => reads.has(event) && !mayRead(rights, reads.get(event)!, now)),
    );
  });
}

/**
 * Which endpoints the caller may see and change (contract 5.11): a key only those it registered;
 * an administrator's session (admin surface) every endpoint of the site. A key-less caller of the
 * Management API (e.g. a user token) sees the administrators' endpoints, never a key's.
 */
export function ownerFilter(ctx: OperationContext, surface: 'manage' | 'admin'): Filter<EndpointDoc> {
  if (surface === 'admin') return { siteId: ctx.site._id };
  return { siteId: ctx.site._id, ownerKeyId: actorKeyId(ctx.principal) };
}

/**
 * The URL is a target the guard accepts; every event is in the catalog (400) and readable by the
 * caller as it holds its rights now (403: a subscription never reads more than its maker could
 * through the API). `events` is what the endpoint will subscribe to once saved: an update of the
 * URL or switching it on checks them too, so nobody sends to a place of theirs events they cannot read.
 */
async function checkInput(ctx: OperationContext, input: Partial<EndpointInput>, events: readonly string[] | undefined): Promise<void> {
  if (input.url !== undefined) {
    try {
      await ctx.services.webhooks.guard.vet(input.url);
    } catch (error) {
      if (error instanceof TargetRejectedError) throw new BadRequestError(error.message);
      throw error;
    }
  }
  if (!events) return;
  const rights = await eventReadRights(ctx.services, ctx.site._id);
  const unknown = input.events?.find((event) => !rights.has(event));
  if (unknown) throw new BadRequestError(`events: unknown event ${unknown}`);
  // An event the catalog no longer offers (its plugin is gone) is left as it is: nothing emits it.
  if (events.some((event) => rights.has(event) && !hasCapability(ctx.principal, rights.get(event)!))) throw new ForbiddenError();
}

/**
 * Publishers hold a site's active endpoints in memory (outbox.ts): returns once every process that
 * holds them dropped them, so an event emitted after this save reaches exactly the endpoints saved.
 */
async function subscriptionsChanged(ctx: OperationContext) {
  await ctx.services.changeFeed.publish(topics.webhookEndpoints(ctx.site._id));
}

export async function createEndpoint(ctx: OperationContext, input: EndpointInput) {
  await checkInput(ctx, input, input.events);
  const { endpoints } = eventCollections(ctx.db);
  const id = newId();
  const secret = generateWebhookSecret();
  const now = ctx.services.clock.now();
  assertSwitch(ctx, 'webhooks');
  const count = (siteId: string | null, bound: number) => endpoints.countDocuments(siteId ? { siteId } : {}, { limit: bound });
  await withinCountQuota(ctx, 'webhookEndpoints', count, () =>
    endpoints.insertOne({
      _id: id,
      siteId: ctx.site._id,
      name: input.name,
      url: input.url,
      events: [...new Set(input.events)],
      active: input.active ?? true,
      secretEnc: ctx.services.webhooks.secrets.seal(secret, secretBinding(ctx.site._id, id)),
      ownerKeyId: actorKeyId(ctx.principal),
      createdBy: actorUserId(ctx.principal),
      createdAt: now,
      updatedAt: now,
      concurrency: input.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
      maxPerSecond: input.maxPerSecond ?? null,
      failingSince: null,
      pausedAt: null,
      pauseReason: null,
      busyUntil: null,
    }),
  );
  await subscriptionsChanged(ctx);
  return { endpoint: { id }, secret };
}

export async function updateEndpoint(ctx: OperationContext, filter: Filter<EndpointDoc>, id: string, input: Partial<EndpointInput>) {
  const { endpoints } = eventCollections(ctx.db);
  // What it receives and where: a rename, a pause or new sending limits send nothing to anyone new.
  const redirects = input.url !== undefined || input.active === true;
  let events = input.events;
  if (!events && redirects) {
    const current = await endpoints.findOne({ ...filter, _id: id }, { projection: { events: 1 } });
    if (!current) throw new NotFoundError();
    events = current.events;
  }
  await checkInput(ctx, input, events);
  const set: Partial<EndpointDoc> = { updatedAt: ctx.services.clock.now() };
  if (input.name !== undefined) set.name = input.name;
  if (input.url !== undefined) set.url = input.url;
  if (input.events !== undefined) set.events = [...new Set(input.events)];
  if (input.active !== undefined) set.active = input.active;
  if (input.concurrency !== undefined) set.concurrency = input.concurrency;
  if (input.maxPerSecond !== undefined) set.maxPerSecond = input.maxPerSecond;
  const updated = await endpoints.findOneAndUpdate({ ...filter, _id: id }, { $set: set }, { returnDocument: 'after' });
  if (!updated) throw new NotFoundError();
  if (input.events !== undefined || input.active !== undefined) await subscriptionsChanged(ctx);
  return { endpoint: (await viewsOf(ctx, [updated]))[0] };
}

export async function deleteEndpoint(ctx: OperationContext, filter: Filter<EndpointDoc>, id: string) {
  const result = await eventCollections(ctx.db).endpoints.deleteOne({ ...filter, _id: id });
  if (result.deletedCount === 0) throw new NotFoundError();
  await subscriptionsChanged(ctx);
  return { id, deleted: true };
}

/**
 * Lifts a circuit-breaker pause: the breaker starts afresh, every delivery that waited is due at
 * once, and the actor is woken to re-drive them. Resuming an endpoint that is not paused changes
 * nothing but still wakes its actor (harmless).
 */
export async function resumeEndpoint(ctx: OperationContext, filter: Filter<EndpointDoc>, id: string) {
  const now = ctx.services.clock.now();
  const { endpoints, deliveries } = eventCollections(ctx.db);
  const updated = await endpoints.findOneAndUpdate(
    { ...filter, _id: id },
    { $set: { pausedAt: null, pauseReason: null, failingSince: null, heldUntil: null, updatedAt: now } },
    { returnDocument: 'after' },
  );
  if (!updated) throw new NotFoundError();
  await deliveries.updateMany({ siteId: ctx.site._id, endpointId: id, status: 'pending', via: 'endpoint' }, { $set: { nextAttemptAt: now } });
  const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
  await wakeActor(ctx.services, where, id).catch((error: unknown) => {
    ctx.services.log.warn({ endpointId: id, err: error instanceof Error ? error.message : String(error) }, 'webhook actor left for the drain');
  });
  return { endpoint: (await viewsOf(ctx, [updated]))[0] };
}

/** The old secret stops signing at once; the new one is returned this one time. */
export async function rotateSecret(ctx: OperationContext, filter: Filter<EndpointDoc>, id: string) {
  const secret = generateWebhookSecret();
  const secretEnc = ctx.services.webhooks.secrets.seal(secret, secretBinding(ctx.site._id, id));
  const updated = await eventCollections(ctx.db).endpoints.findOneAndUpdate(
    { ...filter, _id: id },
    { $set: { secretEnc, updatedAt: ctx.services.clock.now() } },
  );
  if (!updated) throw new NotFoundError();
  return { endpoint: { id }, secret };
}

/** One page of endpoints, oldest first by `_id` (time-ordered, unique: stable while inserting). */
export async function listEndpoints(ctx: OperationContext, filter: Filter<EndpointDoc>, listName: string, query: z.infer<typeof ListQuery>) {
  const { rows, page } = await pageById(ctx, listName, eventCollections(ctx.db).endpoints, filter, query);
  return { data: await viewsOf(ctx, rows), page };
}
