import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandStartedEvent } from 'mongodb';
import { startContentWorld, type ContentWorld } from './support.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld({ monitorCommands: true });
});
afterAll(async () => cw?.close());

describe('languages', () => {
  it('adds, reorders, activates and makes default; refuses bad changes without changing anything', async () => {
    expect((await cw.manage('GET', '/languages')).json().data).toEqual([{ id: 'en', code: 'en', name: 'English', active: true, isDefault: true, position: 0 }]);
    expect((await cw.manage('POST', '/languages', { code: 'fr', name: 'Français' })).statusCode).toBe(201);
    expect((await cw.manage('POST', '/languages', { code: 'de', name: 'Deutsch', active: false })).statusCode).toBe(201);
    expect((await cw.manage('POST', '/languages', { code: 'fr', name: 'Again' })).statusCode).toBe(409);
    expect((await cw.manage('POST', '/languages', { code: 'not a code', name: 'x' })).statusCode).toBe(400);
    const before = (await cw.manage('GET', '/languages')).json();

    // The default must stay active and cannot be removed.
    expect((await cw.manage('PATCH', '/languages/en', { active: false })).statusCode).toBe(400);
    expect((await cw.manage('DELETE', '/languages/en')).statusCode).toBe(400);
    expect((await cw.manage('PATCH', '/languages/de', { isDefault: true })).statusCode).toBe(400);
    expect((await cw.manage('PATCH', '/languages/xx', { active: true })).statusCode).toBe(404);
    expect((await cw.manage('GET', '/languages')).json()).toEqual(before);

    await cw.manage('PATCH', '/languages/de', { active: true, position: 0 });
    await cw.manage('PATCH', '/languages/de', { isDefault: true });
    const after = (await cw.manage('GET', '/languages')).json().data;
    expect(after.map((l: { code: string }) => l.code)).toEqual(['de', 'en', 'fr']);
    expect(after.find((l: { isDefault: boolean }) => l.isDefault).code).toBe('de');
    await cw.manage('PATCH', '/languages/en', { isDefault: true });
  });

  it("a create reads the site's languages from memory, and the next create after a change sees it", async () => {
    const languageReads: string[] = [];
    const listener = (event: CommandStartedEvent) => {
      const filter = (event.command as { filter?: { _id?: unknown } }).filter;
      if (event.commandName === 'find' && event.command.find === 'site_state' && String(filter?._id).startsWith('languages:'))
        languageReads.push(String(filter?._id));
    };
    const create = (title: string, locale: string) => cw.manage('POST', '/content', { title, locale });
    expect((await create('Held languages 0', 'en')).statusCode).toBe(201);
    cw.world.services.mongo.on('commandStarted', listener);
    try {
      for (let i = 1; i <= 3; i++) expect((await create(`Held languages ${i}`, 'en')).statusCode).toBe(201);
      expect(languageReads).toEqual([]);
      // A language added is usable by the very next create; removed, refused by the next one.
      expect((await create('Nieuw', 'nl')).statusCode).toBe(400);
      expect((await cw.manage('POST', '/languages', { code: 'nl', name: 'Nederlands' })).statusCode).toBe(201);
      expect((await create('Nieuw', 'nl')).statusCode).toBe(201);
      expect((await cw.manage('DELETE', '/languages/nl')).statusCode).toBe(200);
      const refused = await create('Weg', 'nl');
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatch(/unknown language/);
    } finally {
      cw.world.services.mongo.off('commandStarted', listener);
    }
  });

  it('the Public API resolves locale against active languages, the default when omitted', async () => {
    await cw.create({ title: 'Bonjour', slug: 'bonjour', locale: 'fr' }).then((e) => cw.manage('POST', `/content/${e.id}/publish`));
    await cw.create({ title: 'Hello', slug: 'hello', locale: 'en' }).then((e) => cw.manage('POST', `/content/${e.id}/publish`));
    await cw.create({ title: 'Hallo', slug: 'hallo', locale: 'de' }).then((e) => cw.manage('POST', `/content/${e.id}/publish`));

    const dflt = (await cw.pub('/content')).json();
    expect(dflt.locale).toBe('en');
    expect(dflt.items.map((i: { slug: string }) => i.slug)).toEqual(['hello']);
    const fr = (await cw.pub('/content?locale=fr')).json();
    expect(fr).toMatchObject({ locale: 'fr', total: 1, nextCursor: null });
    expect(fr.items[0].slug).toBe('bonjour');
    // A regional tag falls back to its language; an unknown one to the default.
    expect((await cw.pub('/content?locale=fr-CA')).json().locale).toBe('fr');
    expect((await cw.pub('/content?locale=zz')).json().locale).toBe('en');
    // Inactive languages are not served.
    await cw.manage('PATCH', '/languages/de', { active: false });
    expect((await cw.pub('/content?locale=de')).json().locale).toBe('en');
    expect((await cw.pub('/content/hallo?locale=de')).statusCode).toBe(404);
    expect((await cw.pub('/content/bonjour?locale=fr')).json().title).toBe('Bonjour');
    expect((await cw.pub('/content/bonjour')).statusCode).toBe(404);
  });
});

describe('search', () => {
  it('matches title or slug case-insensitively, literally (no regex injection)', async () => {
    const a = await cw.create({ title: 'The QUICK Brown Fox', slug: 'fox-story' });
    const b = await cw.create({ title: 'Lazy dog', slug: 'quick-dog' });
    await cw.create({ title: 'Unrelated' });
    await cw.create({ title: 'Price (a.b)*' });
    const ids = async (q: string) => (await cw.manage('GET', `/content?search=${encodeURIComponent(q)}`)).json().data.map((d: { id: string }) => d.id);
    expect((await ids('quick')).sort()).toEqual([a.id, b.id].sort());
    expect(await ids('qUiCk bRoWn')).toEqual([a.id]);
    expect(await ids('FOX-STO')).toEqual([a.id]);
    expect(await ids('.*')).toHaveLength(0);
    expect(await ids('(a.b)*')).toHaveLength(1);

    for (const e of [a, b]) await cw.manage('POST', `/content/${e.id}/publish`);
    const pub = (await cw.pub('/search?q=QUICK')).json();
    expect(pub).toMatchObject({ total: 2, locale: 'en', nextCursor: null });
    const paged = (await cw.pub('/search?q=quick&limit=1')).json();
    expect(paged.items).toHaveLength(1);
    const next = (await cw.pub(`/search?q=quick&limit=1&cursor=${encodeURIComponent(paged.nextCursor)}`)).json();
    expect(next.items[0].id).not.toBe(paged.items[0].id);
    expect((await cw.pub('/search')).statusCode).toBe(400);
    expect((await cw.pub('/search?q=x&limit=101')).statusCode).toBe(400);
  });

  it('filters the Management list by status, type, locale and author', async () => {
    const published = (await cw.manage('GET', '/content?status=published&limit=200')).json().data;
    expect(published.length).toBeGreaterThan(0);
    expect(published.every((d: { status: string }) => d.status === 'published')).toBe(true);
    expect((await cw.manage('GET', '/content?locale=fr')).json().data.every((d: { locale: string }) => d.locale === 'fr')).toBe(true);
    expect((await cw.manage('GET', '/content?type=page')).json().data).toEqual([]);
    expect((await cw.manage('GET', '/content?author=nobody')).json().data).toEqual([]);
    const mine = (await cw.manage('GET', `/content/${published[0].id}`)).json().author;
    expect((await cw.manage('GET', `/content?author=${mine}&limit=200`)).json().data.length).toBeGreaterThan(0);
    expect((await cw.manage('GET', '/content?status=bogus')).statusCode).toBe(400);
  });
});
