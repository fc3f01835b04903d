import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ListQuery, PageInfo } from '../core/paging.ts';
import { EventDescriptorSchema, listEventDescriptors } from './catalog.ts';
import {
  createEndpoint,
  deleteEndpoint,
  EndpointInput,
  EndpointView,
  listEndpoints,
  ownerFilter,
  resumeEndpoint,
  rotateSecret,
  updateEndpoint,
} from './endpoints.ts';

const Created = z.object({ endpoint: z.object({ id: z.string() }), secret: z.string() });
const UpdateInput = EndpointInput.partial().extend({ id: z.string() });

/**
 * The same endpoint operations on two surfaces: the Management API (a key sees and changes only
 * the endpoints it registered) and the administrators' `/api/webhooks` (every endpoint of the site).
 */
function endpointOperations(surface: 'manage' | 'admin') {
  const prefix = surface === 'manage' ? 'webhooks' : 'admin.webhooks';
  return {
    list: defineOperation({
      id: `${prefix}.list`,
      surface,
      method: 'GET',
      path: '/webhooks',
      summary: surface === 'manage' ? 'Webhook endpoints this key registered, and the subscribable events' : 'Every webhook endpoint of the site',
      requires: 'settings:manage',
      input: ListQuery,
      output: z.object({ data: z.array(EndpointView), page: PageInfo, eventTypes: z.array(z.string()) }),
      async handler(ctx, query) {
        const list = await listEndpoints(ctx, ownerFilter(ctx, surface), `${prefix}.list`, query);
        const eventTypes = (await listEventDescriptors(ctx.services, ctx.site._id)).map((d) => d.event);
        return { ...list, eventTypes };
      },
    }),
    create: defineOperation({
      id: `${prefix}.create`,
      surface,
      method: 'POST',
      path: '/webhooks',
      summary: 'Register a webhook endpoint; the signing secret is shown once',
      requires: 'settings:manage',
      status: 201,
      input: EndpointInput,
      output: Created,
      handler: (ctx, input) => createEndpoint(ctx, input),
    }),
    update: defineOperation({
      id: `${prefix}.update`,
      surface,
      method: 'PUT',
      path: '/webhooks/:id',
      summary: 'Change a webhook endpoint (name, URL, events, active, concurrency, maxPerSecond)',
      requires: 'settings:manage',
      input: UpdateInput,
      output: z.object({ endpoint: EndpointView }),
      handler: (ctx, { id, ...input }) => updateEndpoint(ctx, ownerFilter(ctx, surface), id, input),
    }),
    remove: defineOperation({
      id: `${prefix}.delete`,
      surface,
      method: 'DELETE',
      path: '/webhooks/:id',
      summary: 'Delete a webhook endpoint',
      requires: 'settings:manage',
      input: z.object({ id: z.string() }),
      output: z.object({ id: z.string(), deleted: z.boolean() }),
      handler: (ctx, { id }) => deleteEndpoint(ctx, ownerFilter(ctx, surface), id),
    }),
    rotateSecret: defineOperation({
      id: `${prefix}.rotateSecret`,
      surface,
      method: 'POST',
      path: '/webhooks/:id/rotate-secret',
      summary: 'Issue a new signing secret (shown once); the old one stops signing',
      requires: 'settings:manage',
      input: z.object({ id: z.string() }),
      output: Created,
      handler: (ctx, { id }) => rotateSecret(ctx, ownerFilter(ctx, surface), id),
    }),
    resume: defineOperation({
      id: `${prefix}.resume`,
      surface,
      method: 'POST',
      path: '/webhooks/:id/resume',
      summary: 'Resume an endpoint the circuit breaker paused; what waited is sent again',
      requires: 'settings:manage',
      input: z.object({ id: z.string() }),
      output: z.object({ endpoint: EndpointView }),
      handler: (ctx, { id }) => resumeEndpoint(ctx, ownerFilter(ctx, surface), id),
    }),
  };
}

export const manageEndpoints = endpointOperations('manage');
export const adminEndpoints = endpointOperations('admin');

export const listEventsOp = defineOperation({
  id: 'events.list',
  surface: 'manage',
  method: 'GET',
  path: '/events',
  summary: 'The event catalog: every event a webhook can subscribe to, and the capability that reads it',
  requires: 'authenticated',
  input: z.object({}),
  output: z.object({ events: z.array(EventDescriptorSchema) }),
  async handler(ctx) {
    return { events: await listEventDescriptors(ctx.services, ctx.site._id) };
  },
});
