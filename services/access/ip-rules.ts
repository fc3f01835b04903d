/** `normalizeOrigin` is the access feature's own; the IP rules moved to core (the proxy setting uses them). */
export { compileIpRules, isValidIpRule, unmap } from '../core/ip-rules.ts';

/** `https://app.example.com` (scheme, host, optional port; nothing else). */
export function normalizeOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.origin;
  } catch {
    return null;
  }
}
