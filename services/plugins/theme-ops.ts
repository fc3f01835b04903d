import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import {
  builtinThemes,
  catalogThemes,
  findTheme,
  installTheme,
  isCatalogTheme,
  switchTheme,
  themeState,
  uninstallTheme,
  type ThemeDefinition,
} from './themes.ts';
import { ListQuery, pageByKey, pageEnvelope } from '../core/paging.ts';
import { PluginView } from './plugin-view.ts';

/** A theme is shown as a plugin is, without the dates (its switch is the site's, not a lifecycle of its own). */
const ThemeView = PluginView.pick({ id: true, name: true, version: true, description: true, builtin: true, installed: true, active: true });

type State = Awaited<ReturnType<typeof themeState>>;

const toView = (theme: ThemeDefinition, state: State) => ({
  id: theme.id,
  name: theme.name,
  version: theme.version,
  description: theme.description,
  builtin: !isCatalogTheme(theme.id),
  installed: !isCatalogTheme(theme.id) || state.installed.has(theme.id),
  active: theme.id === state.active,
});

const byId = (a: ThemeDefinition, b: ThemeDefinition) => (a.id < b.id ? -1 : 1);

function requireTheme(id: string): ThemeDefinition {
  const theme = findTheme(id);
  if (!theme) throw new NotFoundError('Theme not found');
  return theme;
}

const readState = (ctx: OperationContext) => themeState(ctx.db, ctx.site._id);

const ThemeIdInput = z.object({ id: z.string().min(1).max(100) });

export const listThemesOp = defineOperation({
  id: 'themes.list',
  surface: 'manage',
  method: 'GET',
  path: '/themes',
  summary: "Installed themes (the built-ins and the catalog themes this site installed); `active` marks this site's theme",
  requires: 'themes:read',
  input: ListQuery,
  output: pageEnvelope(ThemeView),
  async handler(ctx, input) {
    const state = await readState(ctx);
    const installed = [...builtinThemes, ...catalogThemes.filter((t) => state.installed.has(t.id))].sort(byId);
    const page = pageByKey(ctx, 'themes', installed, (t) => t.id, input);
    return { data: page.items.map((t) => toView(t, state)), page: page.page };
  },
});

export const listThemeCatalogOp = defineOperation({
  id: 'themes.catalog',
  surface: 'manage',
  method: 'GET',
  path: '/themes/catalog',
  summary: 'The themes this service offers for installation, and whether this site installed each',
  requires: 'themes:read',
  input: ListQuery,
  output: pageEnvelope(ThemeView),
  async handler(ctx, input) {
    const state = await readState(ctx);
    const page = pageByKey(ctx, 'theme-catalog', [...catalogThemes].sort(byId), (t) => t.id, input);
    return { data: page.items.map((t) => toView(t, state)), page: page.page };
  },
});

export const activateThemeOp = defineOperation({
  id: 'themes.activate',
  surface: 'manage',
  method: 'POST',
  path: '/themes/:id/activate',
  summary: 'Make a theme the active theme of this site',
  description:
    'Takes effect on the next static export. Activating the theme already active changes nothing and emits no event. A catalog theme must be installed first (409).',
  requires: 'themes:activate',
  errors: [409],
  heavy: true,
  input: ThemeIdInput,
  output: ThemeView,
  events: ['theme.activated'],
  async handler(ctx, { id }) {
    const theme = requireTheme(id);
    const previous = await switchTheme(ctx.db, ctx.site._id, theme.id, ctx.services.clock.now());
    if (previous === null) throw new ConflictError(`Theme ${theme.id} is not installed on this site; install it first (POST /themes/${theme.id}/install)`);
    if (previous !== theme.id) await ctx.emit('theme.activated', { id: theme.id, previous });
    return toView(theme, await readState(ctx));
  },
});

export const installThemeOp = defineOperation({
  id: 'themes.install',
  surface: 'manage',
  method: 'POST',
  path: '/themes/:id/install',
  summary: 'Install a catalog theme on this site (it becomes available to activate)',
  description:
    "Only themes of the service's catalog (`GET /themes/catalog`) can be installed: any other id is a 404. Installing an installed theme, or a built-in, changes nothing and emits no event.",
  requires: 'themes:activate',
  heavy: true,
  input: ThemeIdInput,
  output: ThemeView,
  events: ['theme.installed'],
  async handler(ctx, { id }) {
    const theme = requireTheme(id);
    if (isCatalogTheme(theme.id) && (await installTheme(ctx.db, ctx.site._id, theme.id, ctx.services.clock.now()))) {
      await ctx.emit('theme.installed', { id: theme.id, name: theme.name, version: theme.version });
    }
    return toView(theme, await readState(ctx));
  },
});

export const uninstallThemeOp = defineOperation({
  id: 'themes.uninstall',
  surface: 'manage',
  method: 'POST',
  path: '/themes/:id/uninstall',
  summary: 'Uninstall a catalog theme from this site',
  description:
    'Built-in themes cannot be uninstalled (409), nor the active theme (409: activate another one first). Uninstalling a theme the site does not have changes nothing.',
  requires: 'themes:activate',
  errors: [409],
  heavy: true,
  input: ThemeIdInput,
  output: ThemeView,
  events: ['theme.uninstalled'],
  async handler(ctx, { id }) {
    const theme = requireTheme(id);
    if (!isCatalogTheme(theme.id)) throw new ConflictError(`Theme ${theme.id} is built in and cannot be uninstalled`);
    const outcome = await uninstallTheme(ctx.db, ctx.site._id, theme.id);
    if (outcome === 'active') throw new ConflictError(`Theme ${theme.id} is the active theme; activate another theme first`);
    if (outcome === 'removed') await ctx.emit('theme.uninstalled', { id: theme.id });
    return toView(theme, await readState(ctx));
  },
});

export const themeOperations = [listThemesOp, listThemeCatalogOp, activateThemeOp, installThemeOp, uninstallThemeOp];
