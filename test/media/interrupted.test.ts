import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ALL_MEDIA, multipartBody, pdfOfSize, startMediaWorld, type MediaWorld } from './support.ts';
import { eventually } from '../support/polling.ts';

let mw: MediaWorld;

beforeAll(async () => {
  mw = await startMediaWorld();
  await mw.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => mw?.close());

it('an upload cut off halfway leaves no chunks, no item and no quota reservation', async () => {
  const { port } = mw.app.server.address() as AddressInfo;
  const body = multipartBody('cut.pdf', pdfOfSize(4 * 1024 * 1024));
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `POST /api/manage/v1/media HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${(await mw.key(ALL_MEDIA)).authorization}\r\n` +
      `Content-Type: ${body.headers['content-type']}\r\nContent-Length: ${body.payload.length}\r\n\r\n`,
  );
  socket.write(body.payload.subarray(0, body.head.length + 2 * 1024 * 1024));

  // The upload is under way: GridFS chunks are written and bytes are reserved.
  await eventually(async () => (await mw.chunkCount()) >= 4, 'the first chunks stored', 40_000);
  expect((await mw.usage()).site).toBeGreaterThan(0);
  socket.destroy();

  await eventually(async () => (await mw.usage()).site === 0 && (await mw.chunkCount()) === 0, 'the cut upload cleaned up', 40_000);
  expect((await mw.usage()).workspace).toBe(0);
  expect(await mw.itemCount()).toBe(0);
  expect(await mw.fileCount()).toBe(0);

  // And the next upload works normally.
  const next = multipartBody('ok.pdf', pdfOfSize(1000));
  const res = await mw.app.inject({
    method: 'POST',
    url: '/api/manage/v1/media',
    payload: next.payload,
    headers: { ...(await mw.key(ALL_MEDIA)), ...next.headers },
  });
  expect(res.statusCode).toBe(201);
  expect((await mw.usage()).site).toBe(1000);
});
