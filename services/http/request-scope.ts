import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { NotFoundError, WorkspaceSuspendedError } from '../core/errors.ts';
import { requestHost } from '../core/tenants.ts';
import type { SiteResolver, SiteScope } from '../tenancy/site-resolver.ts';
import type { RequestFacts } from '../core/context.ts';
import type { EngineWatch } from '../core/engines.ts';

declare module 'fastify' {
  interface FastifyRequest {
    siteScope: SiteScope | null;
    /** Epoch ms of arrival: the runner bounds a request's wait for a missing engine from here (core/engines.ts). */
    receivedAt: number;
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
export const requestScopePlugin = fp<{ resolver: SiteResolver; listenHost: string; engines: EngineWatch }>(
  async (app, { resolver, listenHost, engines }) => {
    app.decorateRequest('siteScope', null);
    app.decorateRequest('receivedAt', 0);
    // The cached case (nearly every request) answers synchronously; only a miss waits on the database.
    app.addHook('onRequest', (request, _reply, done) => {
      // The HTTP server stamped it before the lanes in front of Fastify (lane-server.ts); `inject` did not.
      request.receivedAt = request.raw.receivedAt ?? Date.now();
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
      // A miss reads the database: its wait for a missing engine counts against the request's bound.
      engines.bounded(() => resolver.resolve(host), request.receivedAt).then(settle, done);
    });
  },
  { name: 'request-scope' },
);

export function requestFacts(request: FastifyRequest): RequestFacts {
  return {
    id: String(request.id),
    receivedAt: request.receivedAt,
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
