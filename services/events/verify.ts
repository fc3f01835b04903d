// Shipped receiver-side verifier (docs/webhooks.md). Self-contained on purpose: a receiver can
// copy this file as it is; it needs only node:crypto.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyInput {
  /** The endpoint's `whsec_` secret. */
  secret: string;
  /** The raw request body, exactly as received (before any JSON parsing). */
  body: string | Buffer;
  /** Header `X-Service-Timestamp` (unix seconds). */
  timestamp: string | undefined;
  /** Header `X-Service-Signature` (`sha256=<hex>`). */
  signature: string | undefined;
  /** Oldest accepted timestamp, in seconds; 300 (five minutes) unless given. */
  toleranceSeconds?: number;
  /** Current time in milliseconds (for tests). */
  now?: number;
}

/**
 * True when the signature matches and the timestamp is fresh. Old (or far-future) timestamps are
 * refused so a captured request cannot be replayed later; the HMAC is compared in constant time.
 */
export function verifyWebhookSignature(input: VerifyInput): boolean {
  const tolerance = input.toleranceSeconds ?? 300;
  const now = Math.floor((input.now ?? Date.now()) / 1000);
  if (!input.timestamp || !/^\d{1,12}$/.test(input.timestamp)) return false;
  const timestamp = Number(input.timestamp);
  if (Math.abs(now - timestamp) > tolerance) return false;
  const match = /^sha256=([0-9a-f]{64})$/.exec(input.signature ?? '');
  if (!match) return false;
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const expected = createHmac('sha256', input.secret).update(`${input.timestamp}.`).update(body).digest();
  const given = Buffer.from(match[1], 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
