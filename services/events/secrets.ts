import { randomBytes } from 'node:crypto';
import { createSecretBox, type SecretBox } from '../core/secret-box.ts';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + 32 random bytes, base64url. Shown once, never logged. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export type { SecretBox };

/** Webhook signing secrets must be usable in clear to sign: sealed at rest (core/secret-box.ts). */
export const createWebhookSecretBox = (secretKey: string): SecretBox => createSecretBox(secretKey, 'webhook-secrets');

export const secretBinding = (siteId: string, endpointId: string) => `${siteId}/${endpointId}`;
