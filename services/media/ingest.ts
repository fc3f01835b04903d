import type { Readable } from 'node:stream';
import type { GridFSBucketWriteStream } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, PayloadTooLargeError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { MEDIA_BUCKET, mediaBucket } from './model.ts';
import { DETECTION_BYTES, cleanFilename, detectType } from './detect.ts';
import type { MediaLimits } from './limits.ts';
import { QuotaReservation } from './quota.ts';
import { GRIDFS_CHUNK_SIZE } from './read-stream.ts';

/** What the REST adapter hands over for a multipart `file` field. */
export interface IncomingFile {
  filename?: string;
  declaredType?: string;
  stream: Readable & { truncated?: boolean };
}

export interface StoredFile {
  id: string;
  filename: string;
  mimeType: string;
  size: number;
  /** The first bytes, kept for header-only parsers (image dimensions). */
  head: Buffer;
}

/** Bytes kept from the start for image-size (covers most EXIF blocks before the JPEG frame header). */
const HEAD_KEEP = 128 * 1024;

function write(upload: GridFSBucketWriteStream, chunk: Buffer): Promise<void> {
  // The callback fires once the chunk is buffered or its GridFS chunk is inserted, so awaiting it
  // means no insert is ever in flight when we stop: cleanup after a failure sees every chunk.
  return new Promise((resolve, reject) => upload.write(chunk, (error) => (error ? reject(error) : resolve())));
}

function finish(upload: GridFSBucketWriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    upload.once('error', reject);
    upload.end(() => resolve());
  });
}

/** Removes whatever part of a file reached GridFS (chunks first: a files doc marks a complete file). */
export async function deleteStoredBytes(ctx: Pick<OperationContext, 'db'>, id: string): Promise<void> {
  await ctx.db.collection(`${MEDIA_BUCKET}.chunks`).deleteMany({ files_id: id });
  await ctx.db.collection(`${MEDIA_BUCKET}.files`).deleteOne({ _id: id as never });
}

/**
 * Streams an upload into GridFS without holding more than one chunk (plus the detection head) in
 * memory. The type is decided from the first bytes before anything is stored; size and quota are
 * checked as the bytes arrive. Any failure (bad type, too large, over quota, the client going
 * away halfway) deletes the partial chunks and gives the reserved bytes back.
 */
export async function ingest(ctx: OperationContext, file: IncomingFile, limits: MediaLimits): Promise<StoredFile> {
  const id = newId();
  const reservation = new QuotaReservation(ctx, limits);
  const source = file.stream;
  let upload: GridFSBucketWriteStream | undefined;
  let size = 0;
  const headParts: Buffer[] = [];
  let headLength = 0;
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let detected: { mimeType: string; filename: string } | undefined;

  const start = async () => {
    const head = Buffer.concat(pending);
    const type = await detectType(head.subarray(0, DETECTION_BYTES), file.filename ?? '', limits.allowedTypes);
    const filename = cleanFilename(file.filename, type.ext);
    upload = mediaBucket(ctx.db).openUploadStreamWithId(id as never, filename, {
      chunkSizeBytes: GRIDFS_CHUNK_SIZE,
      metadata: { siteId: ctx.site._id, mimeType: type.mimeType },
    });
    detected = { mimeType: type.mimeType, filename };
    await write(upload, head);
    pending = [];
    pendingLength = 0;
  };

  try {
    await reservation.open();
    for await (const raw of source) {
      const chunk = raw as Buffer;
      size += chunk.length;
      if (limits.maxFileBytes !== null && size > limits.maxFileBytes) {
        throw new PayloadTooLargeError(`Quota exceeded: mediaFileSize (the file exceeds the size limit of ${limits.maxFileBytes} bytes)`);
      }
      await reservation.cover(size);
      if (headLength < HEAD_KEEP) {
        headParts.push(chunk.subarray(0, HEAD_KEEP - headLength));
        headLength += Math.min(chunk.length, HEAD_KEEP - headLength);
      }
      if (upload) {
        await write(upload, chunk);
        continue;
      }
      pending.push(chunk);
      pendingLength += chunk.length;
      if (pendingLength >= DETECTION_BYTES) await start();
    }
    if (source.truncated) throw new PayloadTooLargeError('Quota exceeded: mediaFileSize (the file exceeds the size limit)');
    if (size === 0) throw new BadRequestError('The file is empty');
    if (!upload) await start();
    await finish(upload!);
    await reservation.settle(size);
    return { id, ...detected!, size, head: Buffer.concat(headParts) };
  } catch (error) {
    source.destroy();
    if (upload) await deleteStoredBytes(ctx, id);
    await reservation.release();
    throw error;
  }
}
