import { createHash } from 'node:crypto';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, MANIFEST_FILE, objectKey, type Manifest } from './archive.ts';
import type { BackupRow } from './model.ts';
import type { BackupStore } from './store.ts';

/** Why an archive is refused; the restore route answers it as a 409 and the workflow stops on it before any change. */
export class BackupVerificationError extends Error {}

async function digest(store: BackupStore, key: string): Promise<{ bytes: number; sha256: string } | null> {
  if ((await store.size(key)) === null) return null;
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of store.get(key) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Proves a stored archive whole and this workspace's before a restore changes anything: the
 * manifest is the one the backup recorded (its sha256 is in the platform's row), names this
 * workspace and backup in a known format, and every part it lists has its size and sha256. Reads
 * every byte once, streaming. Answers the manifest.
 */
export async function verifyArchive(store: BackupStore, row: BackupRow, workspaceId: string): Promise<Manifest> {
  if (row.workspaceId !== workspaceId) throw new BackupVerificationError('Backup belongs to another workspace');
  if (row.state !== 'succeeded' || !row.manifestSha256) throw new BackupVerificationError(`Backup is ${row.state}, not restorable`);
  const key = objectKey(row, MANIFEST_FILE);
  const stored = await digest(store, key);
  if (!stored) throw new BackupVerificationError('Backup archive is missing its manifest');
  if (stored.sha256 !== row.manifestSha256) throw new BackupVerificationError('Backup manifest does not match the one recorded at backup time');
  const chunks: Buffer[] = [];
  for await (const chunk of store.get(key) as AsyncIterable<Buffer>) chunks.push(chunk);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest;
  } catch {
    throw new BackupVerificationError('Backup manifest is not valid JSON');
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.formatVersion !== BACKUP_FORMAT_VERSION)
    throw new BackupVerificationError('Backup archive has an unknown format');
  if (manifest.workspaceId !== workspaceId || manifest.backupId !== row._id) throw new BackupVerificationError('Backup archive belongs to another workspace');
  for (const part of [...manifest.collections, ...manifest.media]) {
    const found = await digest(store, objectKey(row, part.file));
    if (!found) throw new BackupVerificationError(`Backup archive is missing ${part.file}`);
    if (found.bytes !== part.bytes || found.sha256 !== part.sha256)
      throw new BackupVerificationError(`Backup archive is corrupted: ${part.file} does not match its checksum`);
  }
  return manifest;
}
