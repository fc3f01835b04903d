import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { CookieRegistryBody, CookieRegistryView, cookiesCollection, cookiesId, defaultCookies } from './cookies.ts';

export const getCookiesOp = defineOperation({
  id: 'cookies.get',
  surface: 'manage',
  method: 'GET',
  path: '/cookies',
  summary: 'The cookie registry (what the consent banner lists)',
  requires: 'settings:manage',
  input: z.object({}),
  output: CookieRegistryView,
  async handler(ctx) {
    const doc = await cookiesCollection(ctx).findOne({ _id: cookiesId(ctx.site._id), siteId: ctx.site._id });
    return doc ? { cookies: doc.cookies, updatedAt: doc.updatedAt.toISOString() } : { cookies: defaultCookies(), updatedAt: null };
  },
});

export const putCookiesOp = defineOperation({
  id: 'cookies.put',
  surface: 'manage',
  method: 'PUT',
  path: '/cookies',
  summary: 'Replace the cookie registry (names unique)',
  requires: 'settings:manage',
  input: CookieRegistryBody,
  output: CookieRegistryView,
  async handler(ctx, { cookies }) {
    const now = ctx.services.clock.now();
    await cookiesCollection(ctx).updateOne({ _id: cookiesId(ctx.site._id), siteId: ctx.site._id }, { $set: { cookies, updatedAt: now } }, { upsert: true });
    return { cookies, updatedAt: now.toISOString() };
  },
});
