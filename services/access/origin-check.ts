import type { Config } from '../core/config.ts';
import { ForbiddenError } from '../core/errors.ts';
import { LOCAL_HOSTS } from '../core/tenants.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import { DEFAULT_SITE_ID } from '../tenancy/platform-db.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF defence for cookie sessions: a state-changing call that carries the session cookie must
 * send an `Origin` whose host is one of the site's own (its domains, PUBLIC_BASE_URL, and for the
 * default site the local host names). No Origin, `null`, or a foreign one is a 403.
 */
export function assertSameSiteOrigin(config: Config, scope: SiteScope, method: string, origin: string | undefined): void {
  if (SAFE_METHODS.has(method.toUpperCase())) return;
  if (!origin || !isSiteOrigin(config, scope, origin)) throw new ForbiddenError();
}

export function isSiteOrigin(config: Config, scope: SiteScope, origin: string): boolean {
  let host: string;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    host = url.hostname.toLowerCase();
  } catch {
    return false;
  }
  if (scope.site.domains.includes(host)) return true;
  if (config.PUBLIC_BASE_URL && new URL(config.PUBLIC_BASE_URL).hostname.toLowerCase() === host) return true;
  return scope.site._id === DEFAULT_SITE_ID && LOCAL_HOSTS.has(host);
}
