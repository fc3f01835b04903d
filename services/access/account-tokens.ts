import { randomBytes, timingSafeEqual } from 'node:crypto';
import { newId } from '../core/ids.ts';
import { secretDigest, secretDigestBytes } from '../core/text.ts';

/**
 * The single-use links of invitations and password resets: `<rowId>.<secret>` (32 random bytes).
 * Only the secret's sha256 is stored; the row is found by its id and the secret compared in
 * constant time, so neither a leaked collection nor response timing opens an account.
 */
export function issueAccountToken(now: Date, id: string = newId(now.getTime())): { id: string; token: string; secretHash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { id, token: `${id}.${secret}`, secretHash: secretDigest(secret) };
}

export function parseAccountToken(token: string): { id: string; secret: string } | null {
  const match = /^([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return match ? { id: match[1], secret: match[2] } : null;
}

export function accountTokenMatches(secret: string, secretHash: string): boolean {
  const expected = Buffer.from(secretHash, 'base64url');
  const actual = secretDigestBytes(secret);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
