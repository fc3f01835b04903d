import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MEDIA, pdfOfSize, startMediaWorld, upload, type MediaWorld } from './support.ts';
import { mediaTrash } from '../../services/media/trash.ts';

const QUOTA = 100_000;
let mw: MediaWorld;

beforeAll(async () => {
  mw = await startMediaWorld({ siteQuotas: { mediaBytes: QUOTA } });
});
afterAll(async () => mw?.close());

async function trashAndPurge(id: string) {
  const del = await mw.app.inject({ method: 'DELETE', url: `/api/manage/v1/media/${id}`, headers: await mw.key(ALL_MEDIA) });
  expect(del.statusCode).toBe(200);
  expect(await mediaTrash.purge(await mw.ctx(), id)).toBe(true);
}

describe('media library quota', () => {
  it('accepts an upload exactly at the quota and rejects one byte over (413), changing nothing', async () => {
    const first = await upload(mw, 'a.pdf', pdfOfSize(60_000));
    expect(first.statusCode).toBe(201);
    expect((await mw.usage()).site).toBe(60_000);

    const over = await upload(mw, 'b.pdf', pdfOfSize(QUOTA - 60_000 + 1));
    expect(over.statusCode).toBe(413);
    expect(over.json().error).toMatch(/quota/);
    expect(await mw.itemCount()).toBe(1);
    expect(await mw.fileCount()).toBe(1);
    expect((await mw.usage()).site).toBe(60_000);

    const exact = await upload(mw, 'c.pdf', pdfOfSize(QUOTA - 60_000));
    expect(exact.statusCode).toBe(201);
    expect((await mw.usage()).site).toBe(QUOTA);
    expect((await mw.usage()).workspace).toBe(QUOTA);

    // Purging gives the bytes back.
    await trashAndPurge(exact.json().id);
    expect((await mw.usage()).site).toBe(60_000);
  });

  it('two uploads racing for the last bytes never overshoot the quota', async () => {
    const remaining = QUOTA - (await mw.usage()).site;
    const results = await Promise.all([
      upload(mw, 'r1.pdf', pdfOfSize(remaining)),
      upload(mw, 'r2.pdf', pdfOfSize(remaining)),
      upload(mw, 'r3.pdf', pdfOfSize(remaining)),
    ]);
    const codes = results.map((res) => res.statusCode).sort();
    expect(codes).toEqual([201, 413, 413]);
    expect((await mw.usage()).site).toBe(QUOTA);
    expect(await mw.fileCount()).toBe(2);
    await trashAndPurge(results.find((res) => res.statusCode === 201)!.json().id);
  });
});
