import { topics } from '../core/topics.ts';
import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation, type Surface } from '../core/operation.ts';
import { BadRequestError } from '../core/errors.ts';
import { hasCapability } from '../core/principal.ts';
import { DEFAULT_KEY_SETTINGS, readSettingsDoc } from '../access/site-settings-store.ts';
import { patchSettingsValues } from './store.ts';
import { SettingsPatchSchema, SettingsView } from './schema.ts';

/**
 * Two views of the same settings: `settings:manage` holders (sessions or keys) get the
 * administrator view, which adds the `private` section and the key settings; `settings:read`
 * alone gets everything else.
 */
async function settingsView(ctx: OperationContext): Promise<Record<string, unknown>> {
  const doc = await readSettingsDoc(ctx.db, ctx.site._id);
  const { private: privateSection, ...values } = (doc?.values ?? {}) as Record<string, unknown>;
  const given = values.api as { publicEnabled?: boolean; commentsEnabled?: boolean } | undefined;
  const api = { publicEnabled: given?.publicEnabled !== false, commentsEnabled: given?.commentsEnabled !== false };
  if (!hasCapability(ctx.principal, 'settings:manage')) return { ...values, api };
  const apiKeys = { ...DEFAULT_KEY_SETTINGS, ...doc?.apiKeys };
  return { ...values, api: { ...api, managementEnabled: apiKeys.enabled }, private: privateSection ?? {}, apiKeys };
}

const defineGet = (surface: Surface) =>
  defineOperation({
    id: surface === 'manage' ? 'settings.get' : 'settings.admin.get',
    surface,
    method: 'GET',
    path: '/settings',
    summary: 'Site settings (the administrator view for settings:manage holders)',
    requires: 'settings:read',
    input: z.object({}),
    output: SettingsView,
    handler: (ctx) => settingsView(ctx),
  });

const definePatch = (surface: Surface) =>
  defineOperation({
    id: surface === 'manage' ? 'settings.update' : 'settings.admin.update',
    surface,
    method: 'PATCH',
    path: '/settings',
    summary: 'Merge a free-form settings patch (null removes a key); api.publicEnabled is the Public API switch',
    requires: 'settings:manage',
    input: SettingsPatchSchema,
    output: SettingsView,
    events: ['settings.updated'],
    async handler(ctx, patch) {
      if (Object.keys(patch).length === 0) throw new BadRequestError('Nothing to change');
      await patchSettingsValues(ctx.db, ctx.site._id, patch, ctx.services.clock.now());
      // The Public API switch lives here: every gateway drops the site's access state first.
      await ctx.services.changeFeed.publish(topics.siteAccess(ctx.site._id));
      await ctx.emit('settings.updated', { changed: Object.keys(patch).sort() });
      return settingsView(ctx);
    },
  });

export const settingsOperations = [defineGet('manage'), definePatch('manage'), defineGet('admin'), definePatch('admin')];
