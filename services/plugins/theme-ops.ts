import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { NotFoundError } from '../core/errors.ts';
import { activeThemeId, builtinThemes, findTheme, switchTheme, type ThemeDefinition } from './themes.ts';
import { ListQuery, pageByKey, pageEnvelope } from '../core/paging.ts';

const ThemeView = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string(),
  active: z.boolean(),
});

const toView = (theme: ThemeDefinition, active: string) => ({
  id: theme.id,
  name: theme.name,
  version: theme.version,
  description: theme.description,
  active: theme.id === active,
});

const sortedThemes = () => [...builtinThemes].sort((a, b) => (a.id < b.id ? -1 : 1));

export const listThemesOp = defineOperation({
  id: 'themes.list',
  surface: 'manage',
  method: 'GET',
  path: '/themes',
  summary: 'Installed themes; `active` marks this site\'s theme',
  requires: 'themes:read',
  input: ListQuery,
  output: pageEnvelope(ThemeView),
  async handler(ctx, input) {
    const active = await activeThemeId(ctx.db, ctx.site._id);
    const page = pageByKey(ctx, 'themes', sortedThemes(), (t) => t.id, input);
    return { data: page.items.map((t) => toView(t, active)), page: page.page };
  },
});

export const activateThemeOp = defineOperation({
  id: 'themes.activate',
  surface: 'manage',
  method: 'POST',
  path: '/themes/:id/activate',
  summary: 'Make a theme the active theme of this site',
  description: 'Takes effect on the next static export. Activating the theme already active changes nothing and emits no event.',
  requires: 'themes:activate',
  heavy: true,
  input: z.object({ id: z.string().min(1).max(100) }),
  output: ThemeView,
  events: ['theme.activated'],
  async handler(ctx, { id }) {
    const theme = findTheme(id);
    if (!theme) throw new NotFoundError('Theme not found');
    const previous = await switchTheme(ctx.db, ctx.site._id, theme.id, ctx.services.clock.now());
    if (previous !== theme.id) await ctx.emit('theme.activated', { id: theme.id, previous });
    return toView(theme, theme.id);
  },
});

export const themeOperations = [listThemesOp, activateThemeOp];
