import type { Db } from 'mongodb';
import { mediaBucket } from './model.ts';

/** Larger images keep width/height from their header but get no blurhash (decoding costs memory). */
const BLURHASH_MAX_BYTES = 32 * 1024 * 1024;
/** Decompression-bomb guard for the blurhash decode. */
const MAX_INPUT_PIXELS = 50_000_000;

export interface ImageFacts {
  width: number | null;
  height: number | null;
  blurhash: string | null;
}

const NONE: ImageFacts = { width: null, height: null, blurhash: null };

/**
 * The decoders load with the first image described (sharp maps libvips, ~6 MB resident, and starts
 * its threads): the worker imports the media feature for its indexes and hooks but never describes
 * an image, so it never loads them (docs/production.md, "What the worker loads").
 */
async function decoders() {
  const [{ imageSize }, { default: sharp }, { encode }] = await Promise.all([import('image-size'), import('sharp'), import('blurhash')]);
  return { imageSize, sharp, encode };
}

function headerSize(imageSize: (input: Uint8Array) => { width?: number; height?: number }, head: Buffer): { width: number; height: number } | null {
  try {
    const { width, height } = imageSize(head);
    return width && height ? { width, height } : null;
  } catch {
    return null; // the dimensions sit beyond the bytes we kept (big EXIF block): sharp reads them
  }
}

/**
 * Width, height and a blurhash for a stored image. Reads the bytes back from GridFS as a stream;
 * sharp decodes a 32×32 thumbnail only. A file sharp cannot decode still gets its header size.
 */
export async function describeImage(db: Db, id: string, mimeType: string, size: number, head: Buffer): Promise<ImageFacts> {
  if (!mimeType.startsWith('image/')) return NONE;
  const { imageSize, sharp, encode } = await decoders();
  const fromHeader = headerSize(imageSize, head);
  if (size > BLURHASH_MAX_BYTES) return { ...NONE, ...fromHeader };
  try {
    const decoder = sharp({ limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });
    const pipe = mediaBucket(db)
      .openDownloadStream(id as never)
      .pipe(decoder);
    const metadataPromise = pipe.clone().metadata();
    const { data, info } = await pipe.rotate().resize(32, 32, { fit: 'inside' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const metadata = await metadataPromise;
    const landscape = info.width >= info.height;
    const blurhash = encode(new Uint8ClampedArray(data), info.width, info.height, landscape ? 4 : 3, landscape ? 3 : 4);
    return {
      width: metadata.autoOrient?.width ?? metadata.width ?? fromHeader?.width ?? null,
      height: metadata.autoOrient?.height ?? metadata.height ?? fromHeader?.height ?? null,
      blurhash,
    };
  } catch {
    return { ...NONE, ...fromHeader };
  }
}
