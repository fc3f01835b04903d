import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MEDIA, executable, jpegImage, multipartBody, pdfOfSize, pngImage, startMediaWorld, upload, type MediaWorld } from './support.ts';

const MAX_FILE = 200_000;
let mw: MediaWorld;

beforeAll(async () => {
  mw = await startMediaWorld({ siteQuotas: { mediaFileSize: MAX_FILE } });
});
afterAll(async () => mw?.close());

/** A rejected upload must leave the library exactly as it was. */
async function expectNothingStored() {
  expect(await mw.itemCount()).toBe(0);
  expect(await mw.chunkCount()).toBe(0);
  expect(await mw.fileCount()).toBe(0);
  expect((await mw.usage()).site).toBe(0);
}

describe('media upload: bad input changes nothing', () => {
  it('rejects a request without a file (400)', async () => {
    const res = await mw.app.inject({
      method: 'POST',
      url: '/api/manage/v1/media',
      headers: { ...(await mw.key(ALL_MEDIA)), 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/file/i);
    await expectNothingStored();
  });

  it('rejects an empty file (400)', async () => {
    const res = await upload(mw, 'empty.png', Buffer.alloc(0));
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/empty/);
    await expectNothingStored();
  });

  it('rejects a lying extension: PNG bytes named .jpg (400)', async () => {
    const res = await upload(mw, 'photo.jpg', await pngImage(), { type: 'image/jpeg' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/extension \.jpg does not match.*image\/png/);
    await expectNothingStored();
  });

  it('rejects an executable renamed .png, whatever the client declares (400)', async () => {
    const res = await upload(mw, 'cute-cat.png', executable(), { type: 'image/png' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/Rejected file type/);
    await expectNothingStored();
  });

  it('rejects content of no recognised format, e.g. HTML named .png (400)', async () => {
    const res = await upload(mw, 'x.png', Buffer.from('<html><script>alert(1)</script></html>'.repeat(200)), { type: 'image/png' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/not a recognised format/);
    await expectNothingStored();
  });

  it('rejects a file one byte over the size limit (413) and accepts one exactly at it', async () => {
    const over = await upload(mw, 'big.pdf', pdfOfSize(MAX_FILE + 1));
    expect(over.statusCode).toBe(413);
    expect(over.json().error).toMatch(/size limit/);
    await expectNothingStored();

    const exact = await upload(mw, 'big.pdf', pdfOfSize(MAX_FILE));
    expect(exact.statusCode).toBe(201);
    expect(exact.json()).toMatchObject({ size: MAX_FILE, mimeType: 'application/pdf' });
    const del = await mw.app.inject({ method: 'DELETE', url: `/api/manage/v1/media/${exact.json().id}`, headers: await mw.key(ALL_MEDIA) });
    expect(del.statusCode).toBe(200);
  });

  it('needs media:upload (403) and a key (401)', async () => {
    const before = await mw.itemCount();
    expect((await upload(mw, 'a.png', await pngImage(), { headers: await mw.key(['media:read']) })).statusCode).toBe(403);
    const body = multipartBody('a.png', await pngImage());
    const anonymous = await mw.app.inject({ method: 'POST', url: '/api/manage/v1/media', payload: body.payload, headers: body.headers });
    expect(anonymous.statusCode).toBe(401);
    expect(await mw.itemCount()).toBe(before);
  });
});

describe('media upload: accepted files', () => {
  it('stores a PNG with detected type, size, dimensions and a blurhash (201)', async () => {
    const png = await pngImage(64, 48);
    const res = await upload(mw, 'Banner.PNG', png, { type: 'application/octet-stream' });
    expect(res.statusCode).toBe(201);
    const item = res.json();
    expect(item).toMatchObject({
      filename: 'Banner.PNG',
      mimeType: 'image/png',
      size: png.length,
      width: 64,
      height: 48,
      status: 'stored',
      uploadedBy: expect.any(String),
    });
    expect(item.blurhash).toMatch(/^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,}$/);
    expect(item.url).toBe(`/media/files/${item.id}/Banner.PNG`);
    expect(await mw.chunkCount(item.id)).toBe(1);
  });

  it('accepts .jpeg for JPEG bytes and strips any path from the name', async () => {
    const res = await upload(mw, '..\\..\\evil/dir/holiday.jpeg', await jpegImage(30, 20));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ filename: 'holiday.jpeg', mimeType: 'image/jpeg', width: 30, height: 20 });
  });

  it('accepts a file of an allowed type without an extension', async () => {
    const res = await upload(mw, 'scan', pdfOfSize(5000));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ filename: 'scan', mimeType: 'application/pdf', width: null, blurhash: null });
  });
});
