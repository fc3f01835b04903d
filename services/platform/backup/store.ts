import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../core/config.ts';

/**
 * Where backup archives are kept, as named objects (`<workspaceId>/<backupId>/<part>`). The local
 * directory is the default; an S3-compatible bucket implements the same five calls (put = a
 * multipart upload completed only at the end; get = GetObject with Range; read = the same, copied
 * into the caller's buffer; size = HeadObject; remove = list + DeleteObjects under the prefix). docs/backups.md.
 */
export interface BackupStore {
  /** Writes an object whole from `body` (memory stays one chunk): readers see it complete or not at all. Answers its byte count. */
  put(key: string, body: AsyncIterable<Buffer>): Promise<number>;
  /** Streams an object (or bytes `start`..`end` inclusive). An absent object fails the stream with code `ENOENT`. */
  get(key: string, range?: { start: number; end: number }): Readable;
  /**
   * Reads an object's bytes from `position` into `into` (as many as fit, fewer at its end) and
   * answers how many. The memory is the caller's, reused from one read to the next: a reader of a
   * gigabyte allocates nothing per read (each allocation of that size costs the worker page faults
   * and garbage collections; docs/backups.md). An absent object fails with code `ENOENT`.
   */
  read(key: string, into: Buffer, position: number): Promise<number>;
  /** An object's byte count, or null when there is none. */
  size(key: string): Promise<number | null>;
  /** Removes every object under `prefix` (a backup's folder); nothing there is not an error. */
  remove(prefix: string): Promise<void>;
}

/** Keys are made by this folder from ids and hex (archive.ts); anything that could leave the root is refused. */
const SAFE_KEY = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

export function localBackupStore(root: string): BackupStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..')) throw new Error(`invalid backup object key ${key}`);
    const path = join(base, key);
    if (!path.startsWith(base + sep)) throw new Error(`invalid backup object key ${key}`);
    return path;
  };
  return {
    async put(key, body) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // Written aside and renamed: a worker killed mid-write leaves a stray temporary file, never a short object.
      const temporary = `${path}.${randomBytes(6).toString('hex')}.partial`;
      let bytes = 0;
      async function* counted() {
        for await (const chunk of body) {
          bytes += chunk.length;
          yield chunk;
        }
      }
      try {
        await pipeline(Readable.from(counted()), createWriteStream(temporary, { mode: 0o600 }));
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      return bytes;
    },
    get(key, range) {
      return createReadStream(pathOf(key), range ? { start: range.start, end: range.end } : {});
    },
    async read(key, into, position) {
      const file = await open(pathOf(key), 'r');
      try {
        let filled = 0;
        while (filled < into.length) {
          const { bytesRead } = await file.read(into, filled, into.length - filled, position + filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return filled;
      } finally {
        await file.close();
      }
    },
    async size(key) {
      try {
        return (await stat(pathOf(key))).size;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async remove(prefix) {
      await rm(pathOf(prefix), { recursive: true, force: true });
    },
  };
}

/** The store this deployment uses: the local directory `BACKUP_DIR` (default `DATA_DIR/backups`). */
export function backupStore(config: Pick<Config, 'BACKUP_DIR' | 'DATA_DIR'>): BackupStore {
  return localBackupStore(config.BACKUP_DIR ?? join(config.DATA_DIR, 'backups'));
}
