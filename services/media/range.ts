/** An inclusive byte range of a representation (RFC 9110 §14). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * One `Range: bytes=…` header against a file of `size` bytes. Returns null to serve the whole
 * file (no header, a syntax we do not read, or several ranges: answering 200 is allowed) and
 * 'unsatisfiable' for a range that starts past the end (416).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return null;
  return { start, end };
}
