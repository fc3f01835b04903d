import { z } from 'zod';
import type { Feature } from '../../services/core/feature.ts';
import { defineOperation } from '../../services/core/operation.ts';
import { features } from '../../services/features.ts';

/**
 * Test-only operations that exercise what the gate offers other features: scope filters on a
 * list, scope checks on one item, the heavy limiter and a per-operation public limit.
 */
const items = (db: import('mongodb').Db) => db.collection<{ _id: string; siteId: string; type: string; locale: string; authorId: string }>('probe_items');
const ScopeFields = { type: 'type', locale: 'locale', owner: 'authorId' };

export const probeOperations = [
  defineOperation({
    id: 'probe.list',
    surface: 'manage',
    method: 'GET',
    path: '/probe',
    summary: 'probe list',
    requires: 'content:read',
    scope: ScopeFields,
    input: z.object({}),
    output: z.object({ data: z.array(z.string()) }),
    async handler(ctx) {
      const rows = await items(ctx.db)
        .find(ctx.scope.filter({ siteId: ctx.site._id }, ScopeFields))
        .sort({ _id: 1 })
        .toArray();
      return { data: rows.map((row) => row._id) };
    },
  }),
  defineOperation({
    id: 'probe.get',
    surface: 'manage',
    method: 'GET',
    path: '/probe/:id',
    summary: 'probe one',
    requires: 'content:read',
    scope: ScopeFields,
    input: z.object({ id: z.string() }),
    output: z.object({ id: z.string() }),
    async handler(ctx, { id }) {
      const row = await items(ctx.db).findOne({ _id: id, siteId: ctx.site._id });
      if (!row) throw new (await import('../../services/core/errors.ts')).NotFoundError();
      ctx.scope.check(row, ScopeFields);
      return { id: row._id };
    },
  }),
  defineOperation({
    id: 'probe.same',
    surface: 'manage',
    method: 'GET',
    path: '/probe-same',
    summary: 'same bytes as the public probe',
    requires: 'authenticated',
    input: z.object({}),
    output: z.object({ hello: z.string() }),
    handler: async () => ({ hello: 'world' }),
  }),
  defineOperation({
    id: 'probe.heavy',
    surface: 'manage',
    method: 'POST',
    path: '/probe-heavy',
    summary: 'heavy probe',
    requires: 'authenticated',
    heavy: true,
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    handler: async () => ({ ok: true }),
  }),
  defineOperation({
    id: 'probe.public',
    surface: 'public',
    method: 'GET',
    path: '/probe-same',
    summary: 'public probe',
    requires: 'public',
    input: z.object({}),
    output: z.object({ hello: z.string() }),
    handler: async () => ({ hello: 'world' }),
  }),
  defineOperation({
    id: 'probe.search',
    surface: 'public',
    method: 'GET',
    path: '/probe-search',
    summary: 'limited public probe',
    requires: 'public',
    rateLimit: { perMinute: 60, by: 'ip' },
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    handler: async () => ({ ok: true }),
  }),
];

export const probeFeature: Feature = { name: 'probe', operations: probeOperations };
export const featuresWithProbe = [...features, probeFeature];
export const seedProbeItems = async (db: import('mongodb').Db, siteId: string, rows: { _id: string; type: string; locale: string; authorId: string }[]) =>
  items(db).insertMany(rows.map((row) => ({ ...row, siteId })));
