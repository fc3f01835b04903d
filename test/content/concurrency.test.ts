import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, type ContentWorld } from './support.ts';

let cw: ContentWorld;
beforeAll(async () => {
  cw = await startContentWorld();
});
afterAll(async () => cw?.close());

describe('optimistic concurrency over HTTP', () => {
  it('20 parallel patches with the same expectedVersion: exactly one 200, nineteen 409', async () => {
    const entry = await cw.create({ title: 'Contended' });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => cw.manage('PATCH', `/content/${entry.id}`, { title: `Writer ${i}`, expectedVersion: entry.version })),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const r of responses.filter((r) => r.statusCode === 409)) expect(r.json()).toHaveProperty('error');
    const winner = responses.find((r) => r.statusCode === 200)!.json();
    const stored = (await cw.manage('GET', `/content/${entry.id}`)).json();
    expect(stored.version).toBe(entry.version + 1);
    expect(stored.title).toBe(winner.title);
    // Exactly one new revision was recorded.
    const revisions = (await cw.manage('GET', `/content/${entry.id}/revisions`)).json();
    expect(revisions.data.map((r: { version: number }) => r.version)).toEqual([2, 1]);
  });

  it('20 parallel patches without expectedVersion: all land, none is lost', async () => {
    const entry = await cw.create({ title: 'Many writers' });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => cw.manage('PATCH', `/content/${entry.id}`, { fields: { [`f${i}`]: i } })));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    const stored = (await cw.manage('GET', `/content/${entry.id}`)).json();
    expect(stored.version).toBe(entry.version + 20);
    expect(Object.keys(stored.fields).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `f${i}`).sort());
  });
});
