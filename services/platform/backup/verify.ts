import { createHash } from 'node:crypto';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, MANIFEST_FILE, objectKey, type Manifest } from './archive.ts';
import type { BackupRow } from './model.ts';
import type { BackupStore } from './store.ts';
import { sideBySide } from './lanes.ts';

/** Why an archive is refused; the restore route answers it as a 409 and the workflow stops on it before any change. */
export class BackupVerificationError extends Error {}

/** Parts hashed side by side (reading one while another is hashed), each lane reading into one buffer of `HASH_READ_BYTES`. */
const HASH_PARALLEL = 4;
const HASH_READ_BYTES = 1024 * 1024;
/** Parts whose size is asked side by side (a store's size is a round trip: a stat, an S3 HEAD). */
const SIZE_PARALLEL = 16;

/** A part's byte count and sha256, read into `buffer` (the caller's, reused) one piece at a time. */
async function sha256Of(store: BackupStore, key: string, buffer: Buffer): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for (;;) {
    const read = await store.read(key, buffer, bytes);
    hash.update(buffer.subarray(0, read));
    bytes += read;
    if (read < buffer.length) return { bytes, sha256: hash.digest('hex') };
  }
}

/**
 * What can be proven of a stored archive without reading its parts (docs/backups.md, "Verification"):
 * the backup is this workspace's and succeeded, its manifest is the one the backup recorded (its
 * sha256 is in the platform's row), names this workspace and backup in a known format, and every
 * part it lists is in the store with its size. Reads the manifest and asks each part's size.
 * Answers the manifest.
 */
export async function checkArchive(store: BackupStore, row: BackupRow, workspaceId: string): Promise<Manifest> {
  if (row.workspaceId !== workspaceId) throw new BackupVerificationError('Backup belongs to another workspace');
  if (row.state !== 'succeeded' || !row.manifestSha256) throw new BackupVerificationError(`Backup is ${row.state}, not restorable`);
  const key = objectKey(row, MANIFEST_FILE);
  if ((await store.size(key)) === null) throw new BackupVerificationError('Backup archive is missing its manifest');
  const chunks: Buffer[] = [];
  for await (const chunk of store.get(key) as AsyncIterable<Buffer>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  if (createHash('sha256').update(bytes).digest('hex') !== row.manifestSha256)
    throw new BackupVerificationError('Backup manifest does not match the one recorded at backup time');
  let manifest: Manifest;
  try {
    manifest = JSON.parse(bytes.toString('utf8')) as Manifest;
  } catch {
    throw new BackupVerificationError('Backup manifest is not valid JSON');
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.formatVersion !== BACKUP_FORMAT_VERSION)
    throw new BackupVerificationError('Backup archive has an unknown format');
  if (manifest.workspaceId !== workspaceId || manifest.backupId !== row._id) throw new BackupVerificationError('Backup archive belongs to another workspace');
  await sideBySide([...manifest.collections, ...manifest.media], SIZE_PARALLEL, async (part) => {
    const size = await store.size(objectKey(row, part.file));
    if (size === null) throw new BackupVerificationError(`Backup archive is missing ${part.file}`);
    if (size !== part.bytes) throw new BackupVerificationError(`Backup archive is corrupted: ${part.file} does not have the size its manifest says`);
  });
  return manifest;
}

/**
 * Proves a stored archive whole and this workspace's before a restore or a clone changes anything:
 * `checkArchive`, then every part's sha256 (every byte read once, streaming, `HASH_PARALLEL` parts
 * side by side). Answers the manifest.
 */
export async function verifyArchive(store: BackupStore, row: BackupRow, workspaceId: string): Promise<Manifest> {
  const manifest = await checkArchive(store, row, workspaceId);
  const buffers: Buffer[] = [];
  await sideBySide([...manifest.collections, ...manifest.media], HASH_PARALLEL, async (part, lane) => {
    const found = await sha256Of(store, objectKey(row, part.file), (buffers[lane] ??= Buffer.allocUnsafe(HASH_READ_BYTES))).catch((error: unknown) => {
      // Gone since `checkArchive` saw it.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BackupVerificationError(`Backup archive is missing ${part.file}`);
      throw error;
    });
    if (found.bytes !== part.bytes || found.sha256 !== part.sha256)
      throw new BackupVerificationError(`Backup archive is corrupted: ${part.file} does not match its checksum`);
  });
  return manifest;
}
