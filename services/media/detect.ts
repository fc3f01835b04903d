import { BadRequestError } from '../core/errors.ts';
import { typeAllowed } from './limits.ts';

/** file-type reads at most this many bytes from the start of a file. */
export const DETECTION_BYTES = 4100;

/** Extensions that name the same format as file-type's canonical `ext`. */
const EXTENSION_ALIASES: Record<string, readonly string[]> = {
  jpg: ['jpg', 'jpeg', 'jpe', 'jfif'],
  tif: ['tif', 'tiff'],
  heic: ['heic', 'heif'],
  mp4: ['mp4', 'm4v'],
  mov: ['mov', 'qt'],
  ogg: ['ogg', 'oga', 'ogv'],
  opus: ['opus', 'ogg'],
  m4a: ['m4a', 'mp4'],
};

export interface DetectedType {
  mimeType: string;
  ext: string;
}

function extensionOf(filename: string): string | null {
  const match = /\.([A-Za-z0-9]{1,10})$/.exec(filename);
  return match ? match[1].toLowerCase() : null;
}

/**
 * Decides what a file is from its first bytes, never from its name or the client's header.
 * Rejects (400) an unrecognised or disallowed format, and a name whose extension says another
 * format: `invoice.pdf.exe` or `photo.png` holding a JPEG would be saved and opened by the
 * extension after download, whatever Content-Type we serve.
 */
export async function detectType(head: Buffer, filename: string, allowed: readonly string[]): Promise<DetectedType> {
  // Loaded with the first upload (file-type and its readers, ~0.2 MB of code): the worker never detects a type.
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(head);
  if (!found) throw new BadRequestError('Rejected file type: the content is not a recognised format');
  if (!typeAllowed(found.mime, allowed)) throw new BadRequestError(`Rejected file type: ${found.mime} is not allowed (quota mediaTypes)`);
  const ext = extensionOf(filename);
  const accepted = EXTENSION_ALIASES[found.ext] ?? [found.ext];
  if (ext !== null && !accepted.includes(ext)) {
    throw new BadRequestError(`Rejected file type: the extension .${ext} does not match the content (${found.mime})`);
  }
  return { mimeType: found.mime, ext: found.ext };
}

/** A filename safe to store and to put in a header: no path, no control characters, bounded. */
export function cleanFilename(raw: string | undefined, fallbackExt: string): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(-200);
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned : `file.${fallbackExt}`;
}
