import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from './support.ts';
import { pluginStates } from '../../services/plugins/state.ts';
import { activeThemeId } from '../../services/plugins/themes.ts';

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((p) => p.id);

// Generous timeout: activation and deactivation are workflows on the shared dev server.
describe('plugin and theme catalog', { timeout: 180_000 }, () => {
  let pw: PluginWorld;
  let admin: string;
  let reader: string;

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    admin = await pw.keyWith(['plugins:read', 'plugins:activate', 'themes:read', 'themes:activate']);
    reader = await pw.keyWith(['plugins:read', 'themes:read']);
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  const rows = async () => {
    const ctx = await pw.site();
    return pluginStates(ctx.db).find({ siteId: ctx.site._id }).sort({ _id: 1 }).toArray();
  };
  const pluginEvents = () => pw.events.filter((e) => e.event.startsWith('plugin.') || e.event.startsWith('theme.'));

  it('offers the catalog; a catalog plugin is not installed until a site installs it', async () => {
    const catalog = (await pw.manage('GET', '/plugins/catalog', reader)).json();
    expect(catalog.data).toEqual([expect.objectContaining({ id: 'webhook-event-group', builtin: false, installed: false, active: false })]);
    expect(ids((await pw.manage('GET', '/plugins', reader)).json())).toEqual(['seo-fields', 'webhook-summary']);
    const refused = await pw.manage('POST', '/plugins/webhook-event-group/activate', admin);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatch(/not installed/);
    expect(await rows()).toEqual([]);
  });

  it('installs a catalog plugin: event, listed, inactive; a second install changes nothing', async () => {
    const res = await pw.manage('POST', '/plugins/webhook-event-group/install', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'webhook-event-group', installed: true, active: false, builtin: false });
    expect(res.json().installedAt).toBeTruthy();
    expect(pluginEvents()).toEqual([{ event: 'plugin.installed', data: { id: 'webhook-event-group', name: 'Webhook event group', version: '1.0.0' } }]);
    expect(ids((await pw.manage('GET', '/plugins', reader)).json())).toEqual(['seo-fields', 'webhook-event-group', 'webhook-summary']);
    const again = await pw.manage('POST', '/plugins/webhook-event-group/install', admin);
    expect(again.statusCode).toBe(200);
    expect(pluginEvents()).toHaveLength(1);
  });

  it('uninstalling an active plugin deactivates it through the workflow first, then removes it', async () => {
    const activated = await pw.manage('POST', '/plugins/webhook-event-group/activate', admin);
    expect(activated.statusCode).toBe(200);
    expect(activated.json().active).toBe(true);
    const ctx = await pw.site();
    expect((await pw.world.services.activePlugins.of(ctx.site._id, ctx.db)).has('webhook-event-group')).toBe(true);
    pw.events.length = 0;

    const res = await pw.manage('POST', '/plugins/webhook-event-group/uninstall', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'webhook-event-group', installed: false, active: false });
    expect(pluginEvents()).toEqual([
      { event: 'plugin.deactivated', data: { id: 'webhook-event-group' } },
      { event: 'plugin.uninstalled', data: { id: 'webhook-event-group' } },
    ]);
    expect(await rows()).toEqual([]);
    expect((await pw.world.services.activePlugins.of(ctx.site._id, ctx.db)).has('webhook-event-group')).toBe(false);
    expect(ids((await pw.manage('GET', '/plugins', reader)).json())).toEqual(['seo-fields', 'webhook-summary']);
    // Already gone: nothing to do, nothing announced.
    expect((await pw.manage('POST', '/plugins/webhook-event-group/uninstall', admin)).statusCode).toBe(200);
    expect(pluginEvents()).toHaveLength(2);
  });

  it('refuses to uninstall a built-in plugin and to install an id outside the catalog; nothing changes', async () => {
    pw.events.length = 0;
    const before = await rows();
    const builtin = await pw.manage('POST', '/plugins/seo-fields/uninstall', admin);
    expect(builtin.statusCode).toBe(409);
    expect(builtin.json().error).toMatch(/built in/);
    for (const op of ['install', 'uninstall']) {
      const unknown = await pw.manage('POST', `/plugins/left-pad/${op}`, admin);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error).toBe('Plugin not found');
    }
    expect(await rows()).toEqual(before);
    expect(pluginEvents()).toEqual([]);
    expect(ids((await pw.manage('GET', '/plugins', reader)).json())).toEqual(['seo-fields', 'webhook-summary']);
  });

  it('install and uninstall need plugins:activate (themes:activate for themes)', async () => {
    expect((await pw.manage('POST', '/plugins/webhook-event-group/install', reader)).json()).toEqual({ error: 'Forbidden' });
    expect((await pw.manage('POST', '/themes/journal/install', reader)).statusCode).toBe(403);
    expect(await rows()).toEqual([]);
  });

  it('themes: install from the catalog, activate, refuse to uninstall while active or built in, uninstall', async () => {
    pw.events.length = 0;
    // A key of its own: install, activate and uninstall are heavy (10 per minute per caller).
    const admin = await pw.keyWith(['themes:read', 'themes:activate']);
    const ctx = await pw.site();
    expect((await pw.manage('POST', '/themes/journal/activate', admin)).statusCode).toBe(409);
    expect(ids((await pw.manage('GET', '/themes', reader)).json())).toEqual(['classic', 'minimal']);

    const installed = await pw.manage('POST', '/themes/journal/install', admin);
    expect(installed.statusCode).toBe(200);
    expect(installed.json()).toMatchObject({ id: 'journal', installed: true, active: false, builtin: false });
    expect(ids((await pw.manage('GET', '/themes', reader)).json())).toEqual(['classic', 'journal', 'minimal']);
    expect((await pw.manage('POST', '/themes/journal/activate', admin)).statusCode).toBe(200);
    expect(await activeThemeId(ctx.db, ctx.site._id)).toBe('journal');

    const active = await pw.manage('POST', '/themes/journal/uninstall', admin);
    expect(active.statusCode).toBe(409);
    expect(active.json().error).toMatch(/active theme/);
    const builtin = await pw.manage('POST', '/themes/classic/uninstall', admin);
    expect(builtin.statusCode).toBe(409);
    const unknown = await pw.manage('POST', '/themes/neon/install', admin);
    expect(unknown.statusCode).toBe(404);
    expect(await activeThemeId(ctx.db, ctx.site._id)).toBe('journal');

    expect((await pw.manage('POST', '/themes/classic/activate', admin)).statusCode).toBe(200);
    const removed = await pw.manage('POST', '/themes/journal/uninstall', admin);
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ id: 'journal', installed: false });
    expect(ids((await pw.manage('GET', '/themes', reader)).json())).toEqual(['classic', 'minimal']);
    expect(pluginEvents()).toEqual([
      { event: 'theme.installed', data: { id: 'journal', name: 'Journal', version: '1.0.0' } },
      { event: 'theme.activated', data: { id: 'journal', previous: 'classic' } },
      { event: 'theme.activated', data: { id: 'classic', previous: 'journal' } },
      { event: 'theme.uninstalled', data: { id: 'journal' } },
    ]);
  });
});
