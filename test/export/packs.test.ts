import { describe, expect, it } from 'vitest';
import { buildPacks, PACK_BYTES } from '../../services/export/files.ts';
import { fromJson } from '../../services/export/model.ts';

/**
 * The pack layout (services/export/files.ts): small files share packs of at most PACK_BYTES, a
 * bigger file spans packs of its own, and every pack's listing (what the archive reads) names
 * the same parts as the file's manifest entry, so its bytes reassemble exactly.
 */
describe('static export packs', () => {
  it('lays small and big files out so that every listed file reassembles from its parts', () => {
    const small = (n: number) => ({ path: `p/${n}.html`, contentType: 'text/html', body: Buffer.alloc(100_000, n), entryId: `e${n}` });
    const big = { path: 'sitemap.xml', contentType: 'application/xml', body: Buffer.from(Array.from({ length: 2 * PACK_BYTES + 123 }, (_, i) => i % 251)), entryId: null };
    const files = [small(1), small(2), small(3), small(4), small(5), small(6), big, small(7)];
    const { packs, stored } = buildPacks('site1', 3, 'e:_', 'run1', files, 1_700_000_000_000);

    expect(stored.map((f) => f.path)).toEqual(files.map((f) => f.path));
    const byId = new Map(packs.map((pack) => [pack._id, Buffer.from(pack.data.buffer)]));
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
      expect(bytes.equals(files[i].body), file.path).toBe(true);
      expect(file.length).toBe(files[i].body.length);
    }
    expect(stored.find((f) => f.path === 'sitemap.xml')!.parts).toHaveLength(3);
  });
});
