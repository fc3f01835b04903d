import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, type ContentWorld } from './support.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld();
  await cw.manage('POST', '/languages', { code: 'de', name: 'Deutsch' });
});
afterAll(async () => cw?.close());

describe('key scope on content', () => {
  it('lists only the type and locale of a scoped key, and refuses writes outside it', async () => {
    const inScope = await cw.create({ title: 'Seite', type: 'page', locale: 'de' });
    const otherType = await cw.create({ title: 'Beitrag', type: 'post', locale: 'de' });
    const otherLocale = await cw.create({ title: 'Page', type: 'page', locale: 'en' });
    const scoped = await cw.keyWith(['content:read', 'content:create', 'content:update', 'content:delete'], { types: ['page'], locales: ['de'] });

    const list = (await cw.manage('GET', '/content?limit=200', undefined, scoped)).json();
    const ids = list.data.map((d: { id: string }) => d.id);
    expect(ids).toContain(inScope.id);
    expect(ids).not.toContain(otherType.id);
    expect(ids).not.toContain(otherLocale.id);
    // Asking for another type explicitly still yields nothing outside the scope.
    expect((await cw.manage('GET', '/content?type=post', undefined, scoped)).json().data).toEqual([]);
    // One item outside the scope gets the generic 401 of an out-of-scope key (contract 7).
    expect((await cw.manage('GET', `/content/${otherType.id}`, undefined, scoped)).statusCode).toBe(401);

    const create = await cw.manage('POST', '/content', { title: 'Post', type: 'post', locale: 'de' }, scoped);
    expect(create.statusCode).toBe(401);
    const createEn = await cw.manage('POST', '/content', { title: 'Engl', type: 'page', locale: 'en' }, scoped);
    expect(createEn.statusCode).toBe(401);
    const created = await cw.manage('POST', '/content', { title: 'Neue Seite', type: 'page', locale: 'de' }, scoped);
    expect(created.statusCode).toBe(201);

    const patch = await cw.manage('PATCH', `/content/${otherType.id}`, { title: 'Hijack' }, scoped);
    expect(patch.statusCode).toBe(401);
    expect((await cw.manage('DELETE', `/content/${otherLocale.id}`, undefined, scoped)).statusCode).toBe(401);
    const unchanged = (await cw.manage('GET', `/content/${otherType.id}`)).json();
    expect(unchanged).toMatchObject({ title: 'Beitrag', version: 1 });
  });

  it('lacking a capability is a 403 and changes nothing', async () => {
    const entry = await cw.create({ title: 'Guarded' });
    const reader = await cw.keyWith(['content:read']);
    const res = await cw.manage('POST', `/content/${entry.id}/publish`, {}, reader);
    expect(res.statusCode).toBe(403);
    expect((await cw.manage('GET', `/content/${entry.id}`)).json().status).toBe('draft');
    expect((await cw.manage('GET', `/content/${entry.id}/revisions`, undefined, reader)).statusCode).toBe(403);
  });
});
