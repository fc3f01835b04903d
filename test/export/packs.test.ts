import { describe, expect, it } from 'vitest';
import { PACK_BYTES, sha256 } from '../../services/export/files.ts';
import { Packer, type NewFile } from '../../services/export/packs.ts';
import type { ExportPackDoc } from '../../services/export/model.ts';
import { fromJson } from '../../services/export/model.ts';

/**
 * The pack layout (services/export/packs.ts): small files share packs of at most PACK_BYTES, a
 * bigger file spans packs of its own, and every pack's listing (what the archive reads) names
 * the same parts as the file's manifest entry, so its bytes reassemble exactly. The packer reuses
 * one buffer: a pack's bytes are what they were when it was handed out, so they are copied then,
 * as the stager writes them then.
 */
function pack(files: NewFile[]) {
  const packer = new Packer('site1', 3, 'e:_', 'run1', 1_700_000_000_000);
  const packs: ExportPackDoc[] = [];
  const bytes = new Map<string, Buffer>();
  const take = (done: ExportPackDoc[]) => {
    for (const doc of done) {
      bytes.set(doc._id, Buffer.from(doc.data.buffer.subarray(0, doc.data.position)));
      packs.push(doc);
    }
  };
  for (const file of files) take(packer.add(file));
  take(packer.end());
  return { packs, stored: packer.stored, bytes };
}

describe('static export packs', () => {
  it('lays small and big files out so that every listed file reassembles from its parts', () => {
    const small = (n: number) => ({ path: `p/${n}.html`, contentType: 'text/html', body: Buffer.alloc(100_000, n), entryId: `e${n}` });
    const big = {
      path: 'sitemap.xml',
      contentType: 'application/xml',
      body: Buffer.from(Array.from({ length: 2 * PACK_BYTES + 123 }, (_, i) => i % 251)),
      entryId: null,
    };
    const files = [small(1), small(2), small(3), small(4), small(5), small(6), big, small(7)];
    const { packs, stored, bytes: byId } = pack(files);

    expect(stored.map((f) => f.path)).toEqual(files.map((f) => f.path));
    for (const pack of packs) {
      expect(pack._id.startsWith('site1:0000000003:e:_:')).toBe(true);
      expect(byId.get(pack._id)!.length).toBeLessThanOrEqual(PACK_BYTES);
    }
    const listed = packs.flatMap((pack) => fromJson(pack.files));
    // Every file is listed once, in the pack of its first part, with the parts the manifest gets.
    expect(listed).toEqual(stored);
    for (const [i, file] of stored.entries()) {
      expect(packs.find((pack) => pack._id === file.parts[0][0])!.files).toContain(`"path":"${file.path}"`);
      const bytes = Buffer.concat(file.parts.map(([id, offset, length]) => byId.get(id)!.subarray(offset, offset + length)));
      expect(bytes.equals(files[i].body as Buffer), file.path).toBe(true);
      expect(file.length).toBe(files[i].body.length);
    }
    expect(stored.find((f) => f.path === 'sitemap.xml')!.parts).toHaveLength(3);
  });

  it('stores rendered text as its UTF-8 bytes, hashed and measured in bytes', () => {
    const text = (n: number) => ({ path: `t/${n}.html`, contentType: 'text/html; charset=utf-8', body: `<p>é ✓ ${n}</p>`.repeat(20_000), entryId: `e${n}` });
    const files = [text(1), text(2), text(3)];
    const { stored, bytes: byId } = pack(files);
    for (const [i, file] of stored.entries()) {
      const expected = Buffer.from(files[i].body, 'utf8');
      const bytes = Buffer.concat(file.parts.map(([id, offset, length]) => byId.get(id)!.subarray(offset, offset + length)));
      expect(bytes.equals(expected), file.path).toBe(true);
      expect(file.length).toBe(expected.length);
      expect(file.sha).toBe(sha256(expected));
    }
  });
});
