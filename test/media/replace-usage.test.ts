import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MEDIA, multipartBody, pdfOfSize, pngImage, startMediaWorld, upload, type MediaWorld } from './support.ts';

let mw: MediaWorld;
let key: { authorization: string };

beforeAll(async () => {
  mw = await startMediaWorld();
  key = await mw.key([...ALL_MEDIA, 'content:read', 'content:create', 'content:update', 'content:delete']);
});
afterAll(async () => mw?.close());

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = key) =>
  mw.app.inject({ method, url: `/api/manage/v1${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

const replace = (id: string, filename: string, content: Buffer, headers = key) => {
  const body = multipartBody(filename, content);
  return mw.app.inject({ method: 'POST', url: `/api/manage/v1/media/${id}/file`, payload: body.payload, headers: { ...headers, ...body.headers } });
};

describe('POST /media/{id}/file (replace)', () => {
  it('stores the new bytes under the same id, keeps the alt text, drops the old bytes and their quota', async () => {
    const item = (await upload(mw, 'first.pdf', pdfOfSize(3000), { headers: key })).json();
    await call('PATCH', `/media/${item.id}`, { altText: 'Kept' });
    const usageBefore = (await mw.usage()).site;
    const png = await pngImage(40, 30);

    const res = await replace(item.id, 'second.png', png);
    expect(res.statusCode).toBe(200);
    const replaced = res.json();
    expect(replaced).toMatchObject({
      id: item.id,
      filename: 'second.png',
      mimeType: 'image/png',
      size: png.length,
      width: 40,
      height: 30,
      altText: 'Kept',
      version: 3,
    });
    // A new URL for the new bytes, so no cache answers it with the old ones.
    expect(replaced.url).toMatch(new RegExp(`/media/files/${item.id}/second\\.png\\?v=.+$`));
    const file = await mw.app.inject({ method: 'GET', url: replaced.url });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.rawPayload.equals(png)).toBe(true);
    expect(file.headers.etag).not.toBe(`"${item.id}"`);
    expect(await mw.chunkCount(item.id)).toBe(0);
    expect((await mw.usage()).site).toBe(usageBefore - 3000 + png.length);
    expect(mw.events.at(-1)).toEqual({
      event: 'media.replaced',
      data: { id: item.id, filename: 'second.png', mimeType: 'image/png', size: png.length, url: replaced.url },
    });

    // Purging a replaced item drops its current bytes and gives them back.
    expect((await call('DELETE', `/media/${item.id}`)).statusCode).toBe(200);
    const admin = await mw.key([...ALL_MEDIA, 'content:delete', 'site:admin']);
    expect((await call('DELETE', `/trash?kind=media&id=${item.id}`, undefined, admin)).json()).toEqual({ purged: 1 });
    expect(await mw.chunkCount()).toBe(0);
    expect((await mw.usage()).site).toBe(usageBefore - 3000);
  });

  it('refuses a missing file (400), an unknown item (404), a caller without media:upload (403), a refused type, and changes nothing', async () => {
    const item = (await upload(mw, 'stay.pdf', pdfOfSize(1200), { headers: key })).json();
    const chunks = await mw.chunkCount();
    const usage = (await mw.usage()).site;
    const empty = await mw.app.inject({
      method: 'POST',
      url: `/api/manage/v1/media/${item.id}/file`,
      headers: { ...key, 'content-type': 'multipart/form-data; boundary=x' },
      payload: '--x--\r\n',
    });
    expect(empty.statusCode).toBe(400);
    expect((await replace('unknown', 'a.pdf', pdfOfSize(100))).statusCode).toBe(404);
    expect((await replace(item.id, 'a.pdf', pdfOfSize(100), await mw.key(['media:read']))).statusCode).toBe(403);
    const bad = await replace(item.id, 'a.exe', Buffer.from('MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff', 'latin1'));
    expect(bad.statusCode).toBeGreaterThanOrEqual(400);
    expect((await call('GET', `/media/${item.id}`)).json()).toEqual(item);
    expect(await mw.chunkCount()).toBe(chunks);
    expect((await mw.usage()).site).toBe(usage);
  });
});

describe('GET /media/{id}/usage', () => {
  it('names the live entries using the item (blocks or fields, however deep), not trashed ones, and not unknown items', async () => {
    const item = (await upload(mw, 'used.pdf', pdfOfSize(800), { headers: key })).json();
    const other = (await upload(mw, 'unused.pdf', pdfOfSize(800), { headers: key })).json();
    const a = (
      await call('POST', '/content', {
        title: 'Uses it in a block',
        slug: 'uses-block',
        blocks: { version: 1, blocks: [{ type: 'file', mediaId: item.id, name: 'doc' }] },
      })
    ).json();
    const b = (
      await call('POST', '/content', {
        title: 'Uses it deep',
        slug: 'uses-deep',
        blocks: { version: 1, blocks: [{ type: 'gallery', images: [{ mediaId: item.id, alt: 'x' }] }] },
      })
    ).json();
    expect(a.id && b.id).toBeTruthy();
    const usage = async (id: string) => {
      const res = await call('GET', `/media/${id}/usage`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const titles = async (id: string) => (await usage(id)).data.map((entry: { title: string }) => entry.title).sort();
    expect(await titles(item.id)).toEqual(['Uses it deep', 'Uses it in a block']);
    expect(await usage(other.id)).toEqual({ data: [], more: false });

    // A change that drops the reference drops the use; a trashed entry no longer counts.
    expect((await call('PATCH', `/content/${b.id}`, { blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'no media' }] } })).statusCode).toBe(200);
    expect(await titles(item.id)).toEqual(['Uses it in a block']);
    expect((await call('DELETE', `/content/${a.id}`)).statusCode).toBe(200);
    expect(await usage(item.id)).toEqual({ data: [], more: false });

    expect((await call('GET', '/media/unknown/usage')).statusCode).toBe(404);
    expect((await call('GET', `/media/${item.id}/usage`, undefined, await mw.key(['media:read']))).statusCode).toBe(403);
  });
});
