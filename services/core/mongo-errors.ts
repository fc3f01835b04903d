import { MongoBulkWriteError, type Collection, type Document, type WriteError } from 'mongodb';

/** A unique index refused the write (MongoDB error 11000). */
export function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}

/**
 * The writes a bulk write (insertMany, bulkWrite) had refused as duplicates, when duplicates are all
 * it had refused; null for any other failure. A bulk write that broke as a whole (a lost connection)
 * is a MongoBulkWriteError too, with no write error at all: that is not "only duplicates".
 */
export function onlyDuplicateWrites(error: unknown): WriteError[] | null {
  const refused = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : [];
  return refused.length > 0 && refused.every((e) => e.code === 11000) ? refused : null;
}

/** Escapes user text for use inside a `$regex`, so search input is matched literally. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The collection does not exist (MongoDB error 26, NamespaceNotFound; some engines say only "ns not found"). */
export function isNamespaceNotFound(error: unknown): boolean {
  const { code, codeName, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; codeName?: unknown; message?: unknown };
  return code === 26 || codeName === 'NamespaceNotFound' || (typeof message === 'string' && /ns not found/i.test(message));
}

/** Drops a collection; one already gone (another process dropped it first) is not an error. */
export async function dropIfExists(collection: Collection<Document>): Promise<void> {
  await collection.drop().catch((error: unknown) => {
    if (!isNamespaceNotFound(error)) throw error;
  });
}
