import type { GridFSBucket } from 'mongodb';

/** Longest line read whole; a longer one is refused (its bytes skipped), so a batch's memory stays bounded. */
export const LINE_MAX_BYTES = 4 * 1024 * 1024;

export interface RawLine {
  /** 1-based line number in the file. */
  no: number;
  text: string | null;
  /** Set when the line was longer than LINE_MAX_BYTES (text is null). */
  tooLong?: boolean;
}

/**
 * Reads up to `max` whole lines of a stored file from byte `offset` (a checkpoint), streaming: only
 * the lines asked for are held. Answers them, the offset and line number after the last one, and
 * whether the file ended. A last line without its newline is read at the end of the file.
 */
export async function readLines(
  bucket: GridFSBucket,
  fileId: string,
  bytes: number,
  offset: number,
  firstNo: number,
  max: number,
): Promise<{ lines: RawLine[]; nextOffset: number; nextNo: number; ended: boolean }> {
  const lines: RawLine[] = [];
  let consumed = offset;
  let no = firstNo;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  const stream = bucket.openDownloadStream(fileId as never, { start: offset, end: bytes });
  const take = (end: Buffer) => {
    const bytes = pendingBytes + end.length + 1;
    consumed += bytes;
    if (skipping) lines.push({ no, text: null, tooLong: true });
    else lines.push({ no, text: Buffer.concat([...pending, end]).toString('utf8') });
    no++;
    pending = [];
    pendingBytes = 0;
    skipping = false;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      while (lines.length < max) {
        const newline = chunk.indexOf(10, start);
        if (newline === -1) break;
        take(chunk.subarray(start, newline));
        start = newline + 1;
      }
      if (lines.length >= max) return { lines, nextOffset: consumed, nextNo: no, ended: false };
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      // A line longer than the limit is counted, not held.
      if (skipping || pendingBytes > LINE_MAX_BYTES) {
        skipping = true;
        pending = [];
      } else pending.push(Buffer.from(rest));
    }
  } finally {
    stream.destroy();
  }
  if (pendingBytes > 0) {
    take(Buffer.alloc(0));
    consumed -= 1; // no newline at the end of the file
  }
  return { lines, nextOffset: consumed, nextNo: no, ended: true };
}
