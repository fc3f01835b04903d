import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MEDIA, pdfOfSize, pngImage, startMediaWorld, upload, type MediaWorld } from './support.ts';

let mw: MediaWorld;
let pdf: Buffer;
let pdfItem: { id: string; url: string; size: number };
let pngItem: { id: string; url: string };

beforeAll(async () => {
  mw = await startMediaWorld();
  // 600 KB spans three GridFS chunks (255 KiB each), so ranges cross chunk boundaries.
  pdf = pdfOfSize(600_000);
  pdfItem = (await upload(mw, 'report 2026.pdf', pdf)).json();
  pngItem = (await upload(mw, 'logo.png', await pngImage())).json();
});
afterAll(async () => mw?.close());

const get = (url: string, headers: Record<string, string> = {}) => mw.app.inject({ method: 'GET', url, headers });

describe('file delivery', () => {
  it('streams the whole file with type, length, ETag, caching and nosniff', async () => {
    const res = await get(pdfItem.url);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(pdf)).toBe(true);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-length']).toBe(String(pdf.length));
    expect(res.headers.etag).toBe(`"${pdfItem.id}"`);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['content-disposition']).toContain("filename*=UTF-8''report%202026.pdf");
    expect(pdfItem.url).toBe(`/media/files/${pdfItem.id}/report%202026.pdf`);
  });

  it('serves images with their detected type and a sandbox CSP', async () => {
    const res = await get(`/media/files/${pngItem.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-security-policy']).toContain('sandbox');
  });

  it('answers 304 to If-None-Match with the current ETag', async () => {
    const res = await get(pdfItem.url, { 'if-none-match': `"${pdfItem.id}"` });
    expect(res.statusCode).toBe(304);
    expect(res.headers.etag).toBe(`"${pdfItem.id}"`);
    expect(res.rawPayload.length).toBe(0);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=261100-261200', 261_100, 261_200],
    ['bytes=599990-', 599_990, 599_999],
    ['bytes=-10', 599_990, 599_999],
    ['bytes=500000-9999999', 500_000, 599_999],
  ])('answers %s with 206 and exactly those bytes', async (range, start, end) => {
    const res = await get(pdfItem.url, { range });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${pdf.length}`);
    expect(res.headers['content-length']).toBe(String(end - start + 1));
    expect(res.rawPayload.equals(pdf.subarray(start, end + 1))).toBe(true);
  });

  it('answers 416 to a range past the end, with the size', async () => {
    const res = await get(pdfItem.url, { range: 'bytes=600000-' });
    expect(res.statusCode).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${pdf.length}`);
    expect(res.json()).toEqual({ error: 'Range not satisfiable' });
    expect(res.headers['cache-control']).toBeUndefined();
  });

  it('sends the whole file for several ranges or a stale If-Range', async () => {
    expect((await get(pdfItem.url, { range: 'bytes=0-1,5-6' })).statusCode).toBe(200);
    expect((await get(pdfItem.url, { range: 'bytes=0-1', 'if-range': '"other"' })).statusCode).toBe(200);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await mw.app.inject({ method: 'HEAD', url: pdfItem.url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-length']).toBe(String(pdf.length));
    expect(res.rawPayload.length).toBe(0);
  });

  it('answers 404 for an unknown id', async () => {
    const res = await get('/media/files/nope/x.png');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Media item not found' });
  });
});

describe('public media list', () => {
  it('lists items with id, filename, mimeType, url and altText, and pages with a cursor', async () => {
    const first = await get('/api/v1/media?limit=1');
    expect(first.statusCode).toBe(200);
    const page = first.json();
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ id: pngItem.id, filename: 'logo.png', mimeType: 'image/png', url: pngItem.url, altText: null });
    expect(page.items[0]).not.toHaveProperty('uploadedBy');
    expect(page.total).toBe(1);
    const second = (await get(`/api/v1/media?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`)).json();
    expect(second.items.map((item: { id: string }) => item.id)).toEqual([pdfItem.id]);
    expect(second.nextCursor).toBeNull();
  });

  it('rejects limit over 200 and a tampered cursor (400)', async () => {
    expect((await get('/api/v1/media?limit=201')).statusCode).toBe(400);
    const res = await get('/api/v1/media?cursor=abc.def');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid cursor' });
  });

  it('answers 404 when the Public API switch is off, and lists again once it is back on', async () => {
    const headers = { ...(await mw.key(['settings:manage'])), 'content-type': 'application/json' };
    const patch = (publicEnabled: boolean) => mw.app.inject({ method: 'PATCH', url: '/api/manage/v1/settings', headers, payload: { api: { publicEnabled } } });
    expect((await patch(false)).statusCode).toBe(200);
    const res = await get('/api/v1/media');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toHaveProperty('error');
    expect((await patch(true)).statusCode).toBe(200);
    expect((await get('/api/v1/media')).statusCode).toBe(200);
  });
});

it('needs no key for files but a key for the management list', async () => {
  expect((await get('/api/manage/v1/media')).statusCode).toBe(401);
  expect((await get('/api/manage/v1/media', await mw.key(ALL_MEDIA))).statusCode).toBe(200);
});

it('documents the upload as multipart with x-required-capability in the Management OpenAPI', async () => {
  const doc = (await get('/api/manage/v1/openapi.json')).json();
  const post = doc.paths['/media'].post;
  expect(post['x-required-capability']).toBe('media:upload');
  expect(post.requestBody.content['multipart/form-data'].schema.properties.file).toEqual({ type: 'string', format: 'binary' });
  expect(doc.paths['/media/{id}'].patch.requestBody.content['application/json'].schema.properties.focalX).toBeTruthy();
  const publicDoc = (await get('/api/v1/openapi.json')).json();
  expect(publicDoc.paths['/media'].get.parameters.map((p: { name: string }) => p.name)).toContain('limit');
});
