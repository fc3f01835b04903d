import { topics } from '../core/topics.ts';
import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { DEFAULT_KEY_SETTINGS, readSettingsDoc, writeKeySettings } from './site-settings-store.ts';
import { normalizeOrigin } from './ip-rules.ts';

const KeySettingsView = z.object({
  enabled: z.boolean().describe('The Management API master switch (off by default)'),
  defaultRateLimitPerMin: z.number().int(),
  allowedOrigins: z.array(z.string()),
});

const Origin = z.string().transform((value, zctx) => {
  const origin = normalizeOrigin(value);
  if (!origin) zctx.addIssue({ code: 'custom', message: 'must be an http(s) origin' });
  return origin ?? '';
});

export const getKeySettingsOp = defineOperation({
  id: 'apiKeys.settings.get',
  surface: 'admin',
  method: 'GET',
  path: '/api-keys/settings',
  summary: 'Management API switch, default rate limit and allowed origins',
  requires: 'site:admin',
  input: z.object({}),
  output: KeySettingsView,
  async handler(ctx) {
    const doc = await readSettingsDoc(ctx.db, ctx.site._id);
    return { ...DEFAULT_KEY_SETTINGS, ...doc?.apiKeys };
  },
});

export const putKeySettingsOp = defineOperation({
  id: 'apiKeys.settings.put',
  surface: 'admin',
  method: 'PUT',
  path: '/api-keys/settings',
  summary: 'Replace the key settings; the switch takes effect on the next request on every gateway',
  requires: 'site:admin',
  input: z
    .object({
      enabled: z.boolean(),
      defaultRateLimitPerMin: z.number().int().min(1).max(100_000).default(DEFAULT_KEY_SETTINGS.defaultRateLimitPerMin),
      allowedOrigins: z.array(Origin).max(100).default([]),
    })
    .strict(),
  output: KeySettingsView,
  async handler(ctx, input) {
    await writeKeySettings(ctx.db, ctx.site._id, input, ctx.services.clock.now());
    await ctx.services.changeFeed.publish(topics.siteAccess(ctx.site._id));
    return input;
  },
});

export const keySettingsOperations = [getKeySettingsOp, putKeySettingsOp];
