import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import type { OperationContext } from '../../services/core/context.ts';
import { PACK_BYTES, prefixed, readFile, sha256 } from '../../services/export/files.ts';
import { exportPacks, type StoredFile } from '../../services/export/model.ts';
import { PackStager, type NewFile } from '../../services/export/packs.ts';

/**
 * Files staged into packs as they come (services/export/packs.ts) against the real engine: the
 * packer reuses its buffers, so every byte read back must be the file's own even when a batch
 * fills several packs; a retried step under the same prefix replaces what its earlier attempt
 * wrote there, including packs the retry no longer needs.
 */
describe('static export pack stager', { timeout: 120_000 }, () => {
  let pw: PluginWorld;
  let ctx: OperationContext;

  beforeAll(async () => {
    pw = await startPluginWorld();
    ctx = await pw.site();
  }, 120_000);
  afterAll(async () => {
    await pw?.close();
  }, 60_000);

  const page = (n: number, size: number): NewFile => ({
    path: `p/${n}/index.html`,
    contentType: 'text/html; charset=utf-8',
    body: `<p>${n} é</p>`.padEnd(size, String.fromCharCode(97 + (n % 26))),
    entryId: `e${n}`,
  });
  const bytesOf = async (file: StoredFile) => {
    const parts: Buffer[] = [];
    for await (const chunk of readFile(ctx.db, file)) parts.push(chunk);
    return Buffer.concat(parts);
  };
  const stage = async (prefix: string, files: NewFile[]) => {
    const stager = new PackStager(ctx.db, ctx.site._id, 7, prefix, 'run1');
    for (const file of files) await stager.add(file);
    return stager.end();
  };
  const packsUnder = (prefix: string) => exportPacks(ctx.db).countDocuments(prefixed(ctx.site._id, 7, prefix));

  it('writes a batch spanning several packs and a file bigger than a pack, each file reading back as its bytes', async () => {
    const files = [
      ...Array.from({ length: 9 }, (_, n) => page(n, 150_000)),
      { ...page(9, 0), path: 'sitemap.xml', body: Buffer.alloc(PACK_BYTES + 4321, 7) },
      page(10, 2_000),
    ];
    const stored = await stage('e:_', files);
    expect(stored.map((f) => f.path)).toEqual(files.map((f) => f.path));
    expect(await packsUnder('e:_')).toBeGreaterThan(4);
    for (const [i, file] of stored.entries()) {
      const expected = typeof files[i].body === 'string' ? Buffer.from(files[i].body as string, 'utf8') : (files[i].body as Buffer);
      const bytes = await bytesOf(file);
      expect(bytes.equals(expected), file.path).toBe(true);
      expect(file.sha).toBe(sha256(expected));
    }
  });

  it('a retry under the same prefix replaces the earlier attempt, and writing nothing leaves nothing', async () => {
    await stage(
      'e:r',
      Array.from({ length: 8 }, (_, n) => page(n, 200_000)),
    );
    const before = await packsUnder('e:r');
    const stored = await stage('e:r', [page(1, 1_000)]);
    expect(before).toBeGreaterThan(1);
    expect(await packsUnder('e:r')).toBe(1);
    expect((await bytesOf(stored[0])).toString('utf8')).toBe(page(1, 1_000).body);
    expect(await stage('e:r', [])).toEqual([]);
    expect(await packsUnder('e:r')).toBe(0);
  });
});
