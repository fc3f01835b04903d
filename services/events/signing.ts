import { createHmac } from 'node:crypto';

/** Names of the headers every delivery attempt carries (documented in docs/webhooks.md). */
export const WEBHOOK_HEADERS = {
  signature: 'x-service-signature',
  timestamp: 'x-service-timestamp',
  delivery: 'x-service-delivery',
  event: 'x-service-event',
  attempt: 'x-service-attempt',
} as const;

/** `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`, keyed with the whole `whsec_` secret. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
