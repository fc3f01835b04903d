import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, type ContentWorld } from './support.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld();
});
afterAll(async () => cw?.close());

describe('cursor paging', () => {
  it('pages through more than three pages while entries are inserted: no duplicate, no gap', async () => {
    const existing: string[] = [];
    for (let i = 0; i < 45; i++) existing.push((await cw.create({ title: `Paged ${i}`, type: 'page' })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await cw.manage('GET', `/content?type=page&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.page.limit).toBe(10);
      expect(body.page.total).toBe(body.data.length);
      expect(body.page.cursor).toBe(cursor);
      seen.push(...body.data.map((d: { id: string }) => d.id));
      cursor = body.page.nextCursor;
      pages++;
      // Writers keep inserting between pages.
      await cw.create({ title: `Inserted during page ${pages}`, type: 'page' });
      await cw.create({ title: `Inserted during page ${pages} b`, type: 'page' });
    } while (cursor);
    expect(pages).toBeGreaterThan(3);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of existing) expect(seen).toContain(id);
  });

  it('pages oldest first with order=oldest: the reverse of newest first, and a cursor of one order is refused by the other', async () => {
    for (let i = 0; i < 5; i++) await cw.create({ title: `Ordered ${i}`, type: 'post', locale: 'en' });
    const walk = async (order: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await cw.manage('GET', `/content?type=post&order=${order}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.statusCode).toBe(200);
        seen.push(...res.json().data.map((d: { id: string }) => d.id));
        cursor = res.json().page.nextCursor;
      } while (cursor);
      return seen;
    };
    const newest = await walk('newest');
    const oldest = await walk('oldest');
    expect(newest.length).toBeGreaterThanOrEqual(5);
    expect(oldest).toEqual([...newest].reverse());
    const newestCursor = (await cw.manage('GET', '/content?type=post&limit=1')).json().page.nextCursor;
    const refused = await cw.manage('GET', `/content?type=post&order=oldest&limit=1&cursor=${encodeURIComponent(newestCursor)}`);
    expect(refused.statusCode).toBe(400);
    expect((await cw.manage('GET', '/content?order=sideways')).statusCode).toBe(400);
  });

  it('validates limit (1–200, default 50)', async () => {
    for (const limit of ['0', '201', 'abc', '-1']) {
      const res = await cw.manage('GET', `/content?limit=${limit}`);
      expect(res.statusCode, limit).toBe(400);
      expect(res.json().error).toMatch(/limit/);
    }
    expect((await cw.manage('GET', '/content')).json().page.limit).toBe(50);
  });

  it('a tampered, garbage or foreign cursor is a 400', async () => {
    const first = (await cw.manage('GET', '/content?limit=2')).json();
    const cursor: string = first.page.nextCursor;
    const [payload, signature] = cursor.split('.');
    const flipped = payload.slice(0, -2) + (payload.at(-2) === 'A' ? 'B' : 'A') + payload.at(-1);
    const foreign = (await cw.manage('GET', `/taxonomies/tag/terms?limit=1`)).json();
    const publicCursor = (await cw.pub('/content?limit=1')).json().nextCursor;
    const bad = [`${flipped}.${signature}`, 'garbage', `${payload}.${signature}x`, `${payload}`, publicCursor, foreign.page.nextCursor].filter(Boolean);
    for (const c of bad) {
      const res = await cw.manage('GET', `/content?limit=2&cursor=${encodeURIComponent(c)}`);
      expect(res.statusCode, c).toBe(400);
      expect(res.json()).toEqual({ error: expect.any(String) });
    }
    const pub = await cw.pub(`/content?cursor=${encodeURIComponent(cursor)}`);
    expect(pub.statusCode).toBe(400);
  });
});
