import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import type { KeyScope, Principal } from '../../services/core/principal.ts';
import type { Capability } from '../../services/core/capabilities.ts';
import { createContext, type OperationContext } from '../../services/core/context.ts';
import { createSiteResolver } from '../../services/tenancy/site-resolver.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { MEDIA_BUCKET, MEDIA_COLLECTIONS } from '../../services/media/model.ts';
import { usedBytes } from '../../services/media/quota.ts';

/** A world on the real engines with the real app and keys, plus probes into the media storage. */
export interface MediaWorld {
  world: World;
  app: FastifyInstance;
  /** A fresh key of the world's administrator (fresh, so upload-heavy tests stay under the per-key extra limiter). */
  key(capabilities: Capability[], scope?: KeyScope): Promise<{ authorization: string }>;
  ctx(principal?: Principal): Promise<OperationContext>;
  chunkCount(id?: string): Promise<number>;
  fileCount(): Promise<number>;
  itemCount(): Promise<number>;
  usage(): Promise<{ site: number; workspace: number }>;
  /** Every event the operations emitted, in order. */
  events: { event: string; data: Record<string, unknown> }[];
  close(): Promise<void>;
}

export const ALL_MEDIA: Capability[] = ['media:read', 'media:upload', 'media:delete'];

export async function startMediaWorld(options: { siteQuotas?: Record<string, unknown>; workspaceQuotas?: Record<string, unknown> } = {}): Promise<MediaWorld> {
  const events: MediaWorld['events'] = [];
  const world = await startWorld({
    events: () => ({
      async publish(_ctx, event, data) {
        events.push({ event, data });
      },
    }),
  });
  const { services } = world;
  const scope = (await createSiteResolver(services).resolve('localhost'))!;
  const { sites, workspaces } = platformCollections(services);
  // Before the first request, so the app's site cache starts with these quotas.
  if (options.siteQuotas) await sites.updateOne({ _id: scope.site._id }, { $set: { quotas: options.siteQuotas } });
  if (options.workspaceQuotas) await workspaces.updateOne({ _id: scope.workspace._id }, { $set: { quotas: options.workspaceQuotas } });

  const fresh = async () => (await createSiteResolver(services).resolve('localhost'))!;
  const db = services.workspaceDb(scope.workspace);
  return {
    world,
    app: world.app,
    async key(capabilities, keyScope) {
      const { key } = await createApiKey(world, { capabilities, scope: keyScope });
      return { authorization: `Bearer ${key}` };
    },
    async ctx(principal = { kind: 'system', reason: 'media test' }) {
      return createContext(services, await fresh(), principal, { id: 'test', ip: '127.0.0.1' });
    },
    chunkCount: (id) => db.collection(`${MEDIA_BUCKET}.chunks`).countDocuments(id ? { files_id: id } : {}),
    fileCount: () => db.collection(`${MEDIA_BUCKET}.files`).countDocuments({}),
    itemCount: () => db.collection(MEDIA_COLLECTIONS.items).countDocuments({}),
    async usage() {
      return usedBytes({ db, site: scope.site });
    },
    events,
    close: () => world.close(),
  };
}

/** A multipart/form-data body with one file part, built by hand so tests control every byte. */
export function multipartBody(filename: string, content: Buffer, type = 'application/octet-stream', field = 'file') {
  const boundary = `----media${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { payload: Buffer.concat([head, content, tail]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, head, tail };
}

export async function pngImage(width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } })
    .png()
    .toBuffer();
}

export async function jpegImage(width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 10 } } })
    .jpeg()
    .toBuffer();
}

/** A PDF of exactly `size` bytes (a minimal header, then padding): handy for byte-exact quota tests. */
export function pdfOfSize(size: number): Buffer {
  const head = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1');
  const body = Buffer.alloc(Math.max(0, size - head.length), 0x20);
  for (let i = 0; i < body.length; i += 97) body[i] = 0x41 + (i % 26);
  return Buffer.concat([head, body]).subarray(0, size);
}

/** A Windows executable header (what file-type calls application/x-msdownload). */
export function executable(): Buffer {
  const buffer = Buffer.alloc(4096);
  buffer.write('MZ', 0, 'latin1');
  buffer.writeUInt32LE(0x80, 0x3c);
  buffer.write('PE\0\0', 0x80, 'latin1');
  return buffer;
}

export async function upload(mw: MediaWorld, filename: string, content: Buffer, options: { headers?: Record<string, string>; type?: string } = {}) {
  const body = multipartBody(filename, content, options.type);
  const headers = options.headers ?? (await mw.key(ALL_MEDIA));
  return mw.app.inject({ method: 'POST', url: '/api/manage/v1/media', payload: body.payload, headers: { ...headers, ...body.headers } });
}
