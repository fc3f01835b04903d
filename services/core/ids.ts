import { randomBytes } from 'node:crypto';

/**
 * Time-ordered, URL-safe ids (48-bit millisecond time + 80 random bits, base32 Crockford).
 * Sorting by id sorts by creation time, which keeps cursor pagination stable and cheap.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function newId(now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(10);
  let rand = '';
  for (let i = 0; i < 16; i++) {
    const bit = i * 5;
    const byte = bit >> 3;
    const value = ((random[byte] << 8) | (random[byte + 1] ?? 0)) >> (11 - (bit & 7));
    rand += ALPHABET[value & 31];
  }
  return time + rand;
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * The lowest id `newId` can make at `at`: every id made before `at` sorts below it, every id made
 * then or later at or above it, so `{ _id: { $lt: idAt(cutoff) } }` finds rows older than `cutoff`
 * by their `_id` index (no date field or index of its own needed).
 */
export function idAt(at: Date): string {
  return newId(at.getTime()).slice(0, 10);
}
