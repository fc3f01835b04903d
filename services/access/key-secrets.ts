import { randomBytes, timingSafeEqual } from 'node:crypto';
import { secretDigest, secretDigestBytes } from '../core/text.ts';

/**
 * A key secret is `svk_` + a 12-character lookup (finds the row) + 32 random bytes in base64url
 * (43 characters). Only a sha256 of the whole secret is stored: with 256 bits of entropy a slow
 * hash adds nothing, and the live check must stay cheap on every request.
 */
const LOOKUP_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const LOOKUP_LENGTH = 12;
const SECRET_LENGTH = 43;

export interface IssuedSecret {
  key: string;
  lookup: string;
  secretHash: string;
}

export function issueSecret(): IssuedSecret {
  const bytes = randomBytes(LOOKUP_LENGTH);
  let lookup = '';
  for (const byte of bytes) lookup += LOOKUP_ALPHABET[byte % LOOKUP_ALPHABET.length];
  const key = `svk_${lookup}${randomBytes(32).toString('base64url')}`;
  return { key, lookup, secretHash: secretDigest(key) };
}

/** The lookup part of a presented secret, or null if it cannot be one of ours. */
export function parseSecret(key: string): string | null {
  if (key.length !== 4 + LOOKUP_LENGTH + SECRET_LENGTH || !key.startsWith('svk_')) return null;
  const lookup = key.slice(4, 4 + LOOKUP_LENGTH);
  return /^[a-z0-9]+$/.test(lookup) && /^[A-Za-z0-9_-]+$/.test(key.slice(4 + LOOKUP_LENGTH)) ? lookup : null;
}

/** The stored hash as bytes, decoded once where a key is held (the check below runs on every request). */
export const storedDigest = (storedHash: string): Buffer => Buffer.from(storedHash, 'base64url');

/** Constant-time check of a presented secret against the stored hash's bytes. */
export function secretMatchesDigest(key: string, stored: Buffer): boolean {
  const given = secretDigestBytes(key);
  return given.length === stored.length && timingSafeEqual(given, stored);
}
