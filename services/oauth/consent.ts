import { createHmac, timingSafeEqual } from 'node:crypto';
import { escapeHtml } from '../core/text.ts';

/** The parameters of one authorization request, carried through the consent form. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string[];
  resource: string;
  state?: string;
}

const CONSENT_TTL_MS = 10 * 60_000;

/**
 * The consent form posts the request back; an HMAC over the request, the signed-in user and an
 * expiry stops a page (or a user) from changing what was shown before approving it.
 */
export function signConsent(secret: string, userId: string, request: AuthorizationRequest, now: Date): string {
  const payload = Buffer.from(JSON.stringify({ u: userId, r: request, e: now.getTime() + CONSENT_TTL_MS })).toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

export function verifyConsent(secret: string, userId: string, token: string, now: Date): AuthorizationRequest | null {
  const [payload, signature] = token.split('.');
  if (!payload || !signature) return null;
  const expected = Buffer.from(mac(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { u: string; r: AuthorizationRequest; e: number };
  if (decoded.u !== userId || decoded.e < now.getTime()) return null;
  return decoded.r;
}

const mac = (secret: string, payload: string) => createHmac('sha256', `oauth-consent:${secret}`).update(payload).digest('base64url');

export function consentPage(input: { clientName: string; scope: string[]; resource: string; redirectUri: string; consent: string }): string {
  const items = input.scope.map((capability) => `<li><code>${escapeHtml(capability)}</code></li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${escapeHtml(input.clientName)}</title></head>
<body>
<main>
<h1>Authorize ${escapeHtml(input.clientName)}</h1>
<p>This application asks to act on your behalf at <code>${escapeHtml(input.resource)}</code> with these capabilities:</p>
<ul>${items}</ul>
<p>It never gets more than you have, and loses what you lose.</p>
<p>Either way, you will then be sent to <code>${escapeHtml(new URL(input.redirectUri).origin)}</code>, an address the application chose itself.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="consent" value="${escapeHtml(input.consent)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</main>
</body></html>`;
}
