import type { Config } from '../core/config.ts';
import type { Site } from '../core/tenants.ts';

/**
 * The origin absolute links of a site use (media files, pages): its first domain, with the scheme
 * and port of PUBLIC_BASE_URL — how clients reach this gateway: `http://localhost:8080` locally
 * gives `http://blog.example.test:8080`, `https://cms.example.com` behind a TLS proxy gives
 * `https://blog.example.com`. Without PUBLIC_BASE_URL: https on the default port (a production
 * proxy). A site without a domain uses PUBLIC_BASE_URL itself, or '' (links relative to the gateway).
 */
export function siteOrigin(config: Pick<Config, 'PUBLIC_BASE_URL'>, site: Pick<Site, 'domains'>): string {
  const base = config.PUBLIC_BASE_URL ? new URL(config.PUBLIC_BASE_URL) : null;
  const domain = site.domains[0];
  if (!domain) return (config.PUBLIC_BASE_URL ?? '').replace(/\/$/, '');
  if (!base) return `https://${domain}`;
  return `${base.protocol}//${domain}${base.port ? `:${base.port}` : ''}`;
}
