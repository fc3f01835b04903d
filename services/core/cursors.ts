import { createHmac, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from './errors.ts';

/**
 * Opaque, signed pagination cursors. The payload says where the next page starts and which list it
 * belongs to (`list`), so a cursor from another list, a tampered one or garbage is a 400.
 */
export interface CursorCodec {
  encode(list: string, position: Record<string, unknown>): string;
  decode(list: string, cursor: string): Record<string, unknown>;
}

export function createCursorCodec(secret: string): CursorCodec {
  const sign = (payload: string) => createHmac('sha256', `cursor:${secret}`).update(payload).digest().subarray(0, 16);
  return {
    encode(list, position) {
      const payload = Buffer.from(JSON.stringify({ l: list, p: position })).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(list, cursor) {
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw new BadRequestError('Invalid cursor');
      const expected = sign(payload);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new BadRequestError('Invalid cursor');
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { l: string; p: Record<string, unknown> };
      if (decoded.l !== list) throw new BadRequestError('Invalid cursor');
      return decoded.p;
    },
  };
}
