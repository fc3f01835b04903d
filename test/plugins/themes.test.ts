import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from './support.ts';
import { activeThemeId } from '../../services/plugins/themes.ts';
import { pinnedClock } from '../access/clock.ts';

describe('themes', () => {
  let pw: PluginWorld;
  let admin: string;
  let reader: string;

  beforeAll(async () => {
    // The heavy-route limiter counts per minute of the service's clock: held still, so a test's calls
    // cannot straddle two windows (a fresh-clone run's last call opened a new one and got 200).
    pw = await startPluginWorld({ clock: pinnedClock() });
    admin = await pw.keyWith(['themes:read', 'themes:activate']);
    reader = await pw.keyWith(['themes:read']);
  }, 300_000);
  afterAll(() => pw?.close(), 120_000);

  const active = async () => {
    const ctx = await pw.site();
    return activeThemeId(ctx.db, ctx.site._id);
  };

  it('lists the built-in themes with the default marked active', async () => {
    const res = await pw.manage('GET', '/themes', reader);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.map((t: { id: string; active: boolean }) => [t.id, t.active])).toEqual([
      ['classic', true],
      ['minimal', false],
    ]);
    expect(body.page.total).toBe(2);
  });

  it('switches the active theme and emits theme.activated with the previous one', async () => {
    const res = await pw.manage('POST', '/themes/minimal/activate', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'minimal', active: true });
    expect(await active()).toBe('minimal');
    expect(pw.events).toEqual([{ event: 'theme.activated', data: { id: 'minimal', previous: 'classic' } }]);
    const listed = (await pw.manage('GET', '/themes', reader)).json().data;
    expect(listed.find((t: { id: string }) => t.id === 'minimal').active).toBe(true);

    // The same theme again: nothing changes, no event.
    const again = await pw.manage('POST', '/themes/minimal/activate', admin);
    expect(again.statusCode).toBe(200);
    expect(pw.events).toHaveLength(1);
  });

  it('refuses an unknown theme (404), a key without themes:activate (403) and no key (401), changing nothing', async () => {
    const unknown = await pw.manage('POST', '/themes/nope/activate', admin);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBeTruthy();
    const forbidden = await pw.manage('POST', '/themes/classic/activate', reader);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error).toBeTruthy();
    const anonymous = await pw.world.app.inject({ method: 'POST', url: '/api/manage/v1/themes/classic/activate' });
    expect(anonymous.statusCode).toBe(401);
    const noRead = await pw.manage('GET', '/themes', await pw.keyWith(['plugins:read']));
    expect(noRead.statusCode).toBe(403);
    expect(await active()).toBe('minimal');
    expect(pw.events).toHaveLength(1);
  });

  it('passes activations through the extra limiter for heavy routes (429 with Retry-After)', async () => {
    const key = await pw.keyWith(['themes:read', 'themes:activate']);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await pw.manage('POST', '/themes/minimal/activate', key)).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    const limited = await pw.manage('POST', '/themes/classic/activate', key);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toBeTruthy();
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(await active()).toBe('minimal');
    // Reads are not heavy.
    expect((await pw.manage('GET', '/themes', key)).statusCode).toBe(200);
  });
});
