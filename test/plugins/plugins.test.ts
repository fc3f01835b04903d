import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../support/world.ts';
import { startPluginWorld, type PluginWorld } from './support.ts';
import { registerPlugin } from '../../services/plugins/registry.ts';
import { markActive, markInactive, pluginStates } from '../../services/plugins/state.ts';
import { pluginActivationWorkflowId } from '../../services/plugins/activation.ts';
import { listEventDescriptors } from '../../services/events/catalog.ts';
import { checkHistory } from '../support/histories.ts';
import { createApiKey } from '../support/access.ts';
import { freshWindow } from '../access/world-helpers.ts';

/** Test-only plugins: one whose activation throws, one that takes a while (to overlap two requests). */
function registerTestPlugins(pw: PluginWorld) {
  registerPlugin(pw.world.services, {
    id: 'broken',
    name: 'Broken',
    version: '0.0.1',
    description: 'Activation always throws.',
    register(api) {
      api.addFilter<Array<{ event: string }>>('webhook.eventTypes', (events) => [
        ...events,
        { event: 'broken.event', description: 'never', data: {} } as never,
      ]);
    },
    async activate() {
      throw new Error('missing prerequisite: the moon');
    },
  });
  registerPlugin(pw.world.services, {
    id: 'slow',
    name: 'Slow',
    version: '0.0.1',
    description: 'Activation takes 1.5 s.',
    async activate() {
      await new Promise((resolve) => setTimeout(resolve, 1500));
    },
  });
}

// Generous timeout: each activation is a workflow on a shared dev server that other suites load too.
describe('plugin host', { timeout: 180_000 }, () => {
  let pw: PluginWorld;
  let admin: string;
  let reader: string;

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    registerTestPlugins(pw);
    admin = await pw.keyWith(['plugins:read', 'plugins:activate', 'settings:read', 'settings:manage']);
    reader = await pw.keyWith(['plugins:read']);
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  const states = async () => {
    const ctx = await pw.site();
    return pluginStates(ctx.db).find({ siteId: ctx.site._id }).sort({ _id: 1 }).toArray();
  };
  const eventNames = async () => (await pw.manage('GET', '/events', admin)).json().events.map((e: { event: string }) => e.event) as string[];

  it('lists the installed plugins, all inactive at first, in the list envelope', async () => {
    const res = await pw.manage('GET', '/plugins', reader);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.map((p: { id: string }) => p.id)).toEqual(['broken', 'seo-fields', 'slow', 'webhook-summary']);
    expect(body.data.every((p: { active: boolean }) => !p.active)).toBe(true);
    expect(body.page).toEqual({ limit: 50, cursor: null, nextCursor: null, total: 4 });
  });

  it('pages the list with signed cursors; a tampered cursor or a bad limit is a 400', async () => {
    const first = (await pw.manage('GET', '/plugins?limit=3', reader)).json();
    expect(first.data).toHaveLength(3);
    const second = (await pw.manage('GET', `/plugins?limit=3&cursor=${encodeURIComponent(first.page.nextCursor)}`, reader)).json();
    expect(second.data.map((p: { id: string }) => p.id)).toEqual(['webhook-summary']);
    expect(second.page.nextCursor).toBeNull();
    const tampered = await pw.manage('GET', `/plugins?cursor=${encodeURIComponent(`${first.page.nextCursor}x`)}`, reader);
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json().error).toBeTruthy();
    const bad = await pw.manage('GET', '/plugins?limit=0', reader);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/limit/);
  });

  it('activates a plugin through the workflow: state, events, and its filters switch on for this site only', async () => {
    const other = await createWorkspace(pw.world.services, {
      name: 'Other',
      domains: ['other.plugins.test'],
      admin: { email: 'owner@other.plugins.test', password: 'correct horse battery' },
    });
    expect(await eventNames()).not.toContain('seo.updated');
    const before = (await pw.world.app.inject({ url: '/api/manage/v1/openapi.json' })).json();
    expect(before.components?.schemas?.SeoFields).toBeUndefined();
    // The plugin's own route answers 404 and is not documented while the plugin is inactive.
    expect(before.paths['/seo/settings']).toBeUndefined();
    const hidden = await pw.manage('GET', '/seo/settings', admin);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().error).toBeTruthy();

    const res = await pw.manage('POST', '/plugins/seo-fields/activate', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'seo-fields', active: true, version: '1.0.0' });
    expect(res.json().activatedAt).toBeTruthy();

    expect(pw.events.filter((e) => e.event.startsWith('plugin.'))).toEqual([
      { event: 'plugin.installed', data: { id: 'seo-fields', name: 'SEO fields', version: '1.0.0' } },
      { event: 'plugin.activated', data: { id: 'seo-fields' } },
    ]);
    const [row] = await states();
    expect(row).toMatchObject({ pluginId: 'seo-fields', active: true });
    const ctx = await pw.site();
    expect(await ctx.db.collection('plugin_settings').countDocuments({ siteId: ctx.site._id })).toBe(1);

    // The run was the workflow named by its business key.
    const handle = pw.world.services.temporal.client.workflow.getHandle(pluginActivationWorkflowId(ctx.workspace._id, ctx.site._id, 'seo-fields'));
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    await checkHistory(handle, 'plugin-activation-ok');

    expect(await eventNames()).toContain('seo.updated');
    const after = (await pw.world.app.inject({ url: '/api/manage/v1/openapi.json' })).json();
    expect(after.components.schemas.SeoFields).toBeTruthy();
    expect(after.paths['/seo/settings'].get['x-required-capability']).toBe('settings:read');
    const served = await pw.manage('GET', '/seo/settings', admin);
    expect(served.statusCode).toBe(200);
    expect(served.json()).toEqual({ titleSuffix: '' });
    // The public document is another surface: the plugin only extends the Management one.
    const pub = (await pw.world.app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(pub.components?.schemas?.SeoFields).toBeUndefined();

    // Another workspace's site does not have the plugin active.
    const otherEvents = await listEventDescriptors(pw.world.services, other.site._id);
    expect(otherEvents.map((e) => e.event)).not.toContain('seo.updated');
  });

  it('activating an active plugin again changes nothing and emits nothing', async () => {
    const count = pw.events.length;
    const [before] = await states();
    const res = await pw.manage('POST', '/plugins/seo-fields/activate', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json().active).toBe(true);
    expect(pw.events.length).toBe(count);
    expect((await states())[0]).toEqual(before);
  });

  it('answers 502 with the failure when the activation routine throws, and leaves the plugin inactive', async () => {
    const before = await states();
    const count = pw.events.length;
    const res = await pw.manage('POST', '/plugins/broken/activate', admin);
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatch(/missing prerequisite: the moon/);
    expect(await states()).toEqual(before);
    expect(pw.events.length).toBe(count);
    const listed = (await pw.manage('GET', '/plugins', reader)).json().data.find((p: { id: string }) => p.id === 'broken');
    expect(listed.active).toBe(false);
    // Its filters never apply.
    expect(await eventNames()).not.toContain('broken.event');
    const ctx = await pw.site();
    await checkHistory(
      pw.world.services.temporal.client.workflow.getHandle(pluginActivationWorkflowId(ctx.workspace._id, ctx.site._id, 'broken')),
      'plugin-activation-failed',
    );
  });

  it('refuses activation without plugins:activate (403), without a key (401), and for an unknown plugin (404)', async () => {
    const before = await states();
    const forbidden = await pw.manage('POST', '/plugins/webhook-summary/activate', reader);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error).toBeTruthy();
    const forbiddenOff = await pw.manage('POST', '/plugins/seo-fields/deactivate', reader);
    expect(forbiddenOff.statusCode).toBe(403);
    const anonymous = await pw.world.app.inject({ method: 'POST', url: '/api/manage/v1/plugins/webhook-summary/activate' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().error).toBeTruthy();
    const unknown = await pw.manage('POST', '/plugins/no-such-plugin/activate', admin);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBeTruthy();
    const noRead = await pw.manage('GET', '/plugins', await pw.keyWith(['themes:read']));
    expect(noRead.statusCode).toBe(403);
    expect(await states()).toEqual(before);
  });

  it('runs one activation of a plugin at a time: an overlapping request is a 409', async () => {
    const [a, b] = await Promise.all([
      pw.manage('POST', '/plugins/slow/activate', admin),
      new Promise((r) => setTimeout(r, 300)).then(() => pw.manage('POST', '/plugins/slow/activate', admin)),
    ]);
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(409);
    expect(b.json().error).toMatch(/already/);
    expect((await states()).find((s) => s.pluginId === 'slow')?.active).toBe(true);
  });

  it('deactivates: the filters stop applying at once, the event fires, deactivating again is a no-op', async () => {
    const res = await pw.manage('POST', '/plugins/seo-fields/deactivate', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'seo-fields', active: false });
    expect(pw.events.at(-1)).toEqual({ event: 'plugin.deactivated', data: { id: 'seo-fields' } });
    expect(await eventNames()).not.toContain('seo.updated');
    expect((await pw.manage('GET', '/seo/settings', admin)).statusCode).toBe(404);
    expect((await pw.world.app.inject({ url: '/api/manage/v1/openapi.json' })).json().paths['/seo/settings']).toBeUndefined();

    const count = pw.events.length;
    const again = await pw.manage('POST', '/plugins/seo-fields/deactivate', admin);
    expect(again.statusCode).toBe(200);
    expect(pw.events.length).toBe(count);

    // Reactivating is not a new install.
    await pw.manage('POST', '/plugins/seo-fields/activate', admin);
    expect(pw.events.slice(count).map((e) => e.event)).toEqual(['plugin.activated']);
  });

  it('scopes filters called with the operation context (mcp.tools passes ctx, not siteId)', async () => {
    const ctx = await pw.site();
    const tools = await pw.world.services.hooks.applyFilters<Array<{ name: string }>>('mcp.tools', [], { ctx });
    expect(tools.map((t) => t.name)).toContain('seo_check');
    // The plugin's route as a tool, through the real tool list of a key that may read settings.
    const listed = await pw.world.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${admin}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).toContain('seo_settings_get');
    expect(listed.body).toContain('seo_check');
    // A plugin's own tool is counted like an operation's: a batch past the key's budget gets 429s.
    await freshWindow(20);
    const { key: limited } = await createApiKey(pw.world, { capabilities: ['settings:read'], rateLimitPerMin: 2 });
    const batch = await pw.world.app.inject({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${limited}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'seo_check', arguments: { title: 'A title' } } })),
    });
    const results = (batch.json() as Array<{ result: { isError?: boolean; content: Array<{ text: string }> } }>).map((answer) => answer.result);
    expect(results.filter((result) => !result.isError)).toHaveLength(2);
    expect(results.filter((result) => result.isError).map((result) => JSON.parse(result.content[0].text))).toEqual([
      { error: 'Too many requests', status: 429 },
    ]);
    const none = await pw.world.services.hooks.applyFilters<Array<{ name: string }>>('mcp.tools', [], {});
    expect(none).toEqual([]);
  });

  it('reshapes webhook payloads only for sites where webhook-summary is active', async () => {
    const ctx = await pw.site();
    const envelope = { id: 'e1', event: 'content.published', data: { title: 'Hello' } };
    const off = await pw.world.services.hooks.applyFilters('webhook.payload', envelope, { siteId: ctx.site._id, event: 'content.published' });
    expect(off).toEqual(envelope);
    expect((await pw.manage('POST', '/plugins/webhook-summary/activate', admin)).statusCode).toBe(200);
    const on = await pw.world.services.hooks.applyFilters('webhook.payload', envelope, { siteId: ctx.site._id, event: 'content.published' });
    expect(on).toEqual({ ...envelope, summary: 'content.published: Hello' });
    const elsewhere = await pw.world.services.hooks.applyFilters('webhook.payload', envelope, { siteId: 'another-site' });
    expect(elsewhere).toEqual(envelope);
  });

  it('records state idempotently, as a retried activity needs', async () => {
    const ctx = await pw.site();
    const now = new Date();
    expect(await markActive(ctx.db, ctx.site._id, 'retry-probe', '1.0.0', now)).toEqual({ installed: true, changed: true });
    expect(await markActive(ctx.db, ctx.site._id, 'retry-probe', '1.0.0', new Date(now.getTime() + 1000))).toEqual({ installed: false, changed: false });
    const row = await pluginStates(ctx.db).findOne({ _id: `${ctx.site._id}:retry-probe` });
    expect(row?.activatedAt).toEqual(now);
    expect(await markInactive(ctx.db, ctx.site._id, 'retry-probe', now)).toEqual({ changed: true });
    expect(await markInactive(ctx.db, ctx.site._id, 'retry-probe', now)).toEqual({ changed: false });
    expect(await markActive(ctx.db, ctx.site._id, 'retry-probe', '1.0.0', now)).toEqual({ installed: false, changed: true });
    await pluginStates(ctx.db).deleteOne({ _id: `${ctx.site._id}:retry-probe` });
  });
});
