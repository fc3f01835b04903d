import { randomBytes, randomUUID } from 'node:crypto';

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
  // 80 random bits from a v4 UUID's first 8 and last 12 hex digits (all random): `randomUUID` draws
  // from an entropy cache, where `randomBytes(10)` crossed into the crypto library on every id
  // (about 3 µs, several ids per request: bench/RESULTS.md, session 23).
  const uuid = randomUUID();
  const hex = uuid.slice(0, 8) + uuid.slice(24);
  let rand = '';
  for (let i = 0; i < 20; i += 5) {
    const value = parseInt(hex.slice(i, i + 5), 16);
    rand += ALPHABET[value >> 15] + ALPHABET[(value >> 10) & 31] + ALPHABET[(value >> 5) & 31] + ALPHABET[value & 31];
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
