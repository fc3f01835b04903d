import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { NotFoundError, WorkspaceSuspendedError } from '../core/errors.ts';
import { requestHost } from '../core/tenants.ts';
import type { SiteResolver, SiteScope } from '../tenancy/site-resolver.ts';
import type { RequestFacts } from '../core/context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    siteScope: SiteScope | null;
  }
  interface FastifyContextConfig {
    /** Routes that answer without a site (liveness). Everything else resolves the Host first. */
    siteless?: boolean;
  }
}

/** The public reads of a site: a suspended workspace answers 404 there, as if it did not exist. */
const PUBLIC_PREFIXES = ['/api/v1/', '/api/v1?', '/media/files/'];
const isPublicUrl = (url: string) => url === '/api/v1' || PUBLIC_PREFIXES.some((prefix) => url.startsWith(prefix));

/**
 * Resolves every request's Host to its site before any handler runs; an unknown host is a 404.
 * A suspended workspace answers its public API (and media files) 404 and every other surface
 * (Management API, admin, MCP, OAuth) 423 `{ error: "Workspace suspended" }`.
 */
export const requestScopePlugin = fp<{ resolver: SiteResolver; listenHost: string }>(
  async (app, { resolver, listenHost }) => {
    app.decorateRequest('siteScope', null);
    // The cached case (nearly every request) answers synchronously; only a miss waits on the database.
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.routeOptions.config?.siteless) return done();
      const host = requestHost(request.headers.host, request.raw.socket?.remoteAddress, listenHost);
      const settle = (scope: SiteScope | null) => {
        if (scope && scope.workspace.status !== 'active') {
          return done(isPublicUrl(request.url) ? new NotFoundError('Unknown site') : new WorkspaceSuspendedError());
        }
        request.siteScope = scope;
        done(scope ? undefined : new NotFoundError('Unknown site'));
      };
      const cached = resolver.peek(host);
      if (cached !== undefined) return settle(cached);
      resolver.resolve(host).then(settle, done);
    });
  },
  { name: 'request-scope' },
);

export function requestFacts(request: FastifyRequest): RequestFacts {
  return {
    id: String(request.id),
    ip: request.ip,
    origin: request.headers.origin,
    userAgent: request.headers['user-agent'],
    range: request.headers.range,
    ifRange: typeof request.headers['if-range'] === 'string' ? request.headers['if-range'] : undefined,
    ifNoneMatch: request.headers['if-none-match'],
  };
}

export function requireScope(request: FastifyRequest): SiteScope {
  if (!request.siteScope) throw new NotFoundError('Unknown site');
  return request.siteScope;
}
