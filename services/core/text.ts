import { hash } from 'node:crypto';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe inside HTML element content and quoted attribute values. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/**
 * How high-entropy secrets (API keys, session and OAuth tokens) are stored: their sha256 only,
 * so a leaked collection opens nothing. Not for passwords, which get scrypt.
 */
export const secretDigest = (secret: string) => hash('sha256', secret, 'base64url');
/** The same digest as bytes, for a constant-time comparison. */
export const secretDigestBytes = (secret: string) => hash('sha256', secret, 'buffer');
