import { randomBytes } from 'node:crypto';
import { GridFSBucket, type Db, type Document } from 'mongodb';
import { newId } from '../../services/core/ids.ts';
import { recordSearchBackfilled } from '../../services/content/search-index.ts';

/**
 * A workspace's bulk for the data benchmarks (backup, move): `entries` published entries of about
 * 1 KB written with the driver in batches of 1,000, and `mediaMb` files of 1 MB in its media bucket.
 * Given the workspace's `Db` as the service hands it out (`services.workspaceDb`), its collections get
 * their declared indexes as any workspace's do. The entries are recorded as indexed for search (no
 * postings): the worker's backfill would otherwise index them while the benchmark runs.
 * Returns the seconds it took.
 */
export async function seedBulk(db: Db, siteId: string, entries: number, mediaMb: number): Promise<number> {
  const started = performance.now();
  let last: string | null = null;
  for (let i = 0; i < entries; i += 1000) {
    const docs: Document[] = [];
    for (let j = i; j < Math.min(entries, i + 1000); j++) {
      const now = new Date();
      docs.push({
        _id: newId(),
        siteId,
        type: 'post',
        status: 'published',
        locale: 'en',
        title: `Entry ${j}`,
        slug: `entry-${j}`,
        fields: { body: randomBytes(384).toString('hex') },
        version: 1,
        createdAt: now,
        updatedAt: now,
      });
    }
    await db.collection('content_entries').insertMany(docs);
    last = docs[docs.length - 1]._id as string;
  }
  await recordSearchBackfilled(db, last);
  await uploadBenchMedia(db, mediaMb, randomBytes(1024 * 1024));
  return (performance.now() - started) / 1000;
}

/** `count` copies of `file` into the media bucket, ids `bench-<i>` (the seed, and a baseline writing the same files). */
export async function uploadBenchMedia(db: Db, count: number, file: Buffer): Promise<void> {
  const bucket = new GridFSBucket(db, { bucketName: 'media_files' });
  for (let i = 0; i < count; i++) {
    await new Promise((resolve, reject) =>
      bucket
        .openUploadStreamWithId(`bench-${i}` as never, `bench-${i}.bin`)
        .on('finish', resolve)
        .on('error', reject)
        .end(file),
    );
  }
}
