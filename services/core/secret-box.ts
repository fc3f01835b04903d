import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets the service must use in clear later (webhook signing secrets, TOTP seeds) are encrypted
 * at rest (AES-256-GCM) with a key derived from SECRET_KEY for one `purpose`. `boundTo` (the row's
 * site and id) is the additional data: a ciphertext copied onto another row does not decrypt.
 */
export interface SecretBox {
  seal(secret: string, boundTo: string): string;
  open(sealed: string, boundTo: string): string;
}

export function createSecretBox(secretKey: string, purpose: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secretKey, purpose, 'aes-256-gcm v1', 32));
  return {
    seal(secret, boundTo) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(boundTo));
      const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    open(sealed, boundTo) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error(`Unreadable ${purpose} secret`);
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
