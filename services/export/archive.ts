import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Db } from 'mongodb';
import type { ByteRange } from '../media/range.ts';
import { livePacks, packData, readFile } from './files.ts';
import type { LiveOutput, StoredFile } from './model.ts';

/**
 * The export as a tar archive (POSIX ustar, PAX records for paths longer than ustar holds),
 * generated while it streams: one pack of files at a time (files.ts), so memory stays flat
 * whatever the size. Files come in pack order (the order they were written), not path order. Headers are a pure function of the path, size and upload time, so the archive's length is
 * known before the first byte (Content-Length) and any byte range can be produced on its own.
 */
const BLOCK = 512;
const padded = (size: number) => Math.ceil(size / BLOCK) * BLOCK;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtime: number, type: '0' | 'x', prefix = ''): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(mtime, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148, 'ascii');
  return block;
}

/** Splits a path into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a `/`, if it can. */
function ustarSplit(path: string): { name: string; prefix: string } | null {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name) return { name, prefix };
  }
  return null;
}

/** A PAX `path=` record: its length field counts its own digits. */
function paxRecord(path: string): Buffer {
  const body = ` path=${path}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return Buffer.from(`${length}${body}`, 'utf8');
}

/** The bytes that precede a file's content (its header, or PAX header + record + header). */
export function entryHead(file: Pick<StoredFile, 'length' | 'mtime' | 'path'>): Buffer {
  const path = file.path;
  const mtime = Math.floor(file.mtime / 1000);
  const split = ustarSplit(path);
  if (split) return header(split.name, file.length, mtime, '0', split.prefix);
  const record = paxRecord(path);
  const recordBlock = Buffer.alloc(padded(record.length));
  record.copy(recordBlock);
  return Buffer.concat([header('PaxHeader', record.length, mtime, 'x'), recordBlock, header(path.slice(-100), file.length, mtime, '0')]);
}

const entryLength = (file: StoredFile) => entryHead(file).length + padded(file.length);
const TRAILER = Buffer.alloc(BLOCK * 2);

/** The archive's exact length (one pass over the listing, no bodies read). */
export async function tarLength(db: Db, siteId: string, live: LiveOutput): Promise<{ bytes: number; files: number }> {
  let bytes = TRAILER.length;
  let files = 0;
  for await (const pack of livePacks(db, siteId, live, false)) {
    for (const file of pack.files) bytes += entryLength(file);
    files += pack.files.length;
  }
  return { bytes, files };
}

/**
 * The archive's bytes `range` (inclusive) or all of it, streamed. The whole archive reads each
 * pack once with its bytes; a range lists the packs first and fetches only those it touches.
 */
export function tarStream(db: Db, siteId: string, live: LiveOutput, range: ByteRange | null): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    const start = range?.start ?? 0;
    const end = range ? range.end + 1 : Number.POSITIVE_INFINITY; // exclusive
    let offset = 0;
    const part = function* (bytes: Buffer) {
      const from = Math.max(start - offset, 0);
      const to = Math.min(end - offset, bytes.length);
      if (to > from) yield bytes.subarray(from, to);
      offset += bytes.length;
    };
    for await (const pack of livePacks(db, siteId, live, range === null)) {
      if (offset >= end) break;
      const span = pack.files.reduce((sum, file) => sum + entryLength(file), 0);
      if (offset + span <= start) {
        offset += span; // wholly before the range: its bytes are not read
        continue;
      }
      const data = pack.data ?? (await packData(db, pack.id));
      for (const file of pack.files) {
        if (offset >= end) break;
        const head = entryHead(file);
        const total = head.length + padded(file.length);
        if (offset + total <= start) {
          offset += total;
          continue;
        }
        yield* part(head);
        const dataStart = Math.max(start - offset, 0);
        const dataEnd = Math.min(end - offset, file.length);
        if (dataEnd > dataStart) {
          if (file.parts.length === 1) {
            const [, at] = file.parts[0];
            yield data.subarray(at + dataStart, at + dataEnd);
          } else yield* readFile(db, file, { start: dataStart, end: dataEnd - 1 });
        }
        offset += file.length;
        yield* part(Buffer.alloc(padded(file.length) - file.length));
      }
    }
    yield* part(TRAILER);
  }
  return Readable.from(generate(), { objectMode: false });
}

/** The same archive gzip-compressed (length unknown in advance: sent chunked, no ranges). */
export function tarGzStream(db: Db, siteId: string, live: LiveOutput): Readable {
  // pipeline, not pipe: a failed read destroys the gzip stream too, so the reply is cut, not left hanging.
  return pipeline(tarStream(db, siteId, live, null), createGzip({ level: 6 }), () => undefined);
}
