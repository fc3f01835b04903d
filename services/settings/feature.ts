import type { Feature } from '../core/feature.ts';
import { settingsOperations } from './settings-ops.ts';
import { ensureSiteSettings } from '../access/site-settings-store.ts';

export const settingsFeature: Feature = {
  name: 'settings',
  operations: settingsOperations,
  async provisionSite(ctx) {
    await ensureSiteSettings(ctx.db, ctx.site._id, ctx.services.clock.now());
  },
};
