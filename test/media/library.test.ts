import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MEDIA, pdfOfSize, pngImage, startMediaWorld, upload, type MediaWorld } from './support.ts';
import { Readable } from 'node:stream';
import { mediaTrash } from '../../services/media/trash.ts';
import { uploadMediaOp } from '../../services/media/upload-ops.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import type { Principal } from '../../services/core/principal.ts';

let mw: MediaWorld;
let key: { authorization: string };
const ids: string[] = [];

beforeAll(async () => {
  mw = await startMediaWorld();
  key = await mw.key(ALL_MEDIA);
  for (let i = 0; i < 5; i++) ids.push((await upload(mw, `file-${i}.pdf`, pdfOfSize(1000 + i), { headers: key })).json().id);
  ids.push((await upload(mw, 'Photo.png', await pngImage(), { headers: key })).json().id);
});
afterAll(async () => mw?.close());

const call = (method: 'GET' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = key) =>
  mw.app.inject({ method, url: `/api/manage/v1${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('management list and item', () => {
  it('pages newest first with the Management envelope and signed cursors', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/media?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.page).toMatchObject({ limit: 4, cursor, total: body.data.length });
      seen.push(...body.data.map((item: { id: string }) => item.id));
      cursor = body.page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by type and filename prefix', async () => {
    const images = (await call('GET', '/media?type=image')).json();
    expect(images.data.map((item: { id: string }) => item.id)).toEqual([ids[5]]);
    const found = (await call('GET', '/media?search=FILE-3')).json();
    expect(found.data.map((item: { filename: string }) => item.filename)).toEqual(['file-3.pdf']);
    expect((await call('GET', '/media?search=.*')).json().data).toEqual([]);
  });

  it('rejects bad list input (400): limit 0, limit 201, tampered cursor', async () => {
    for (const query of ['limit=0', 'limit=201', 'cursor=eyJ4IjoxfQ.AAAA']) {
      const res = await call('GET', `/media?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toHaveProperty('error');
    }
  });

  it('gets one item, 404 for an unknown one', async () => {
    const res = await call('GET', `/media/${ids[5]}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: ids[5], mimeType: 'image/png', width: 64, height: 48 });
    expect(res.headers.etag).toBeTruthy();
    const missing = await call('GET', '/media/unknown');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'Media item not found' });
  });
});

describe('PATCH /media/{id}', () => {
  it('sets alt text, caption and focal point, and clears them with null', async () => {
    const res = await call('PATCH', `/media/${ids[5]}`, { altText: 'A blue square', caption: 'Logo', focalX: 0, focalY: 1 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ altText: 'A blue square', caption: 'Logo', focalX: 0, focalY: 1, version: 2 });
    const cleared = await call('PATCH', `/media/${ids[5]}`, { focalX: null, caption: null });
    expect(cleared.json()).toMatchObject({ altText: 'A blue square', caption: null, focalX: null, focalY: 1, version: 3 });
  });

  it.each([
    [{ focalX: 1.01 }, /focalX/],
    [{ focalY: -0.1 }, /focalY/],
    [{ focalX: '0.5' }, /focalX/],
    [{ altText: 5 }, /altText/],
    [{ alt: 'typo' }, /alt/],
    [{}, /Nothing to change/],
  ])('rejects %j (400) and changes nothing', async (payload, message) => {
    const before = (await call('GET', `/media/${ids[5]}`)).json();
    const res = await call('PATCH', `/media/${ids[5]}`, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
    expect((await call('GET', `/media/${ids[5]}`)).json()).toEqual(before);
  });

  it('404 for an unknown item; 403 without media:upload', async () => {
    expect((await call('PATCH', '/media/unknown', { altText: 'x' })).statusCode).toBe(404);
    expect((await call('PATCH', `/media/${ids[5]}`, { altText: 'x' }, await mw.key(['media:read']))).statusCode).toBe(403);
  });
});

describe('key scope ownOnly', () => {
  it('sees and changes only its owner’s media', async () => {
    // An item uploaded by another user (through the operation itself, as that user's key would).
    const other: Principal = { kind: 'key', keyId: 'k-other', userId: 'someone-else', capabilities: new Set(ALL_MEDIA), scope: {}, isPlatformOperator: false };
    const foreign = await invokeOperation(uploadMediaOp, await mw.ctx(other), {
      file: { filename: 'theirs.pdf', stream: Readable.from([pdfOfSize(500)]) },
    });
    const own = await mw.key(ALL_MEDIA, { ownOnly: true });
    const list = (await call('GET', '/media', undefined, own)).json();
    expect(list.data.map((item: { id: string }) => item.id)).toEqual([...ids].reverse());
    expect((await call('GET', `/media/${foreign.id}`, undefined, own)).statusCode).toBe(404);
    expect((await call('PATCH', `/media/${foreign.id}`, { altText: 'x' }, own)).statusCode).toBe(404);
    expect((await call('DELETE', `/media/${foreign.id}`, undefined, own)).statusCode).toBe(404);
    const seen = (await call('GET', `/media/${foreign.id}`)).json();
    expect(seen).toMatchObject({ uploadedBy: 'someone-else', altText: null, status: 'stored' });
    expect((await call('PATCH', `/media/${foreign.id}`, { altText: 'seen by an unscoped key' })).statusCode).toBe(200);
  });
});

describe('trash round trip', () => {
  it('DELETE trashes (file 404), restore brings it back, purge removes the bytes', async () => {
    const id = ids[0];
    const item = (await call('GET', `/media/${id}`)).json();
    const usageBefore = (await mw.usage()).site;
    const publicIds = async () => (await mw.app.inject({ method: 'GET', url: '/api/v1/media?limit=200' })).json().items.map((i: { id: string }) => i.id);
    expect(await publicIds()).toContain(id); // and now that answer is in the public cache

    const del = await call('DELETE', `/media/${id}`);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toMatchObject({ id, status: 'trashed' });
    expect(mw.events.at(-1)).toEqual({ event: 'media.deleted', data: { id, filename: 'file-0.pdf' } });
    expect((await call('GET', `/media/${id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/media/${id}`)).statusCode).toBe(404);
    expect((await mw.app.inject({ method: 'GET', url: item.url })).statusCode).toBe(404);
    expect(await publicIds()).not.toContain(id);

    const admin = await mw.key([...ALL_MEDIA, 'content:delete', 'site:admin']);
    const trash = (await call('GET', '/trash?kind=media', undefined, admin)).json();
    expect(trash.data).toEqual([{ kind: 'media', id, title: 'file-0.pdf', trashedAt: expect.any(String) }]);
    const restore = (payload: object) => mw.app.inject({ method: 'POST', url: '/api/manage/v1/trash/restore', headers: admin, payload });
    expect((await restore({ kind: 'media', id })).statusCode).toBe(200);
    expect((await restore({ kind: 'media', id })).statusCode).toBe(404);
    expect((await call('GET', `/media/${id}`)).json().status).toBe('stored');
    expect((await mw.app.inject({ method: 'GET', url: item.url })).statusCode).toBe(200);
    expect(await publicIds()).toContain(id);

    const purge = () => call('DELETE', `/trash?kind=media&id=${id}`, undefined, admin);
    expect((await purge()).statusCode).toBe(404); // not in the trash
    expect((await call('DELETE', `/media/${id}`)).statusCode).toBe(200);
    expect((await purge()).json()).toEqual({ purged: 1 });
    expect((await purge()).statusCode).toBe(404);
    expect(await mw.chunkCount(id)).toBe(0);
    expect((await mw.usage()).site).toBe(usageBefore - item.size);
    expect(await mediaTrash.list(await mw.ctx(), 10, null)).toEqual([]);
    expect((await mw.app.inject({ method: 'GET', url: item.url })).statusCode).toBe(404);
  });

  it('emitted media.uploaded for each upload', () => {
    const uploaded = mw.events.filter((e) => e.event === 'media.uploaded');
    expect(uploaded.length).toBeGreaterThanOrEqual(7);
    expect(uploaded[0].data).toEqual({ id: ids[0], filename: 'file-0.pdf', mimeType: 'application/pdf', size: 1000, url: `/media/files/${ids[0]}/file-0.pdf` });
  });
});
