/**
 * The Content-Security-Policy of every exported page (docs/plugins.md, "Content-Security-Policy").
 * The pages run no script at all; their styles are inline (the theme's stylesheet and the
 * customizer's values in a `<style>`, a spacer's `style` height); images, video and audio come
 * from the site's media URLs (`<origin>/media/files/<id>`, another host than the static copy's)
 * or from http(s) URLs the authors gave. Nothing else is loaded, no form posts, no `<base>`.
 */
const POLICY = [
  "default-src 'none'",
  "script-src 'none'",
  "style-src 'unsafe-inline'",
  "img-src 'self' http: https:",
  "media-src 'self' http: https:",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** In a `<meta http-equiv>`: browsers ignore `frame-ancestors` there, so it is only in the headers. */
export const EXPORT_CSP_META = `<meta http-equiv="Content-Security-Policy" content="${POLICY}">`;

/** The policy as an HTTP header (the preview, static hosts through `_headers`). */
export const EXPORT_CSP_HEADER = `${POLICY}; frame-ancestors 'self'`;

/** `_headers` (Netlify and Cloudflare Pages syntax): the policy and nosniff on every path. */
export const HEADERS_FILE = `/*\n  Content-Security-Policy: ${EXPORT_CSP_HEADER}\n  X-Content-Type-Options: nosniff\n`;
