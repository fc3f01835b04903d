import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Services } from '../core/context.ts';
import { BadRequestError, TooManyRequestsError, UnauthorizedError } from '../core/errors.ts';
import { formatZodError } from '../core/operation.ts';
import { CAPABILITIES, type Capability } from '../core/capabilities.ts';
import type { AccessGate } from '../access/gate.ts';
import { findClient, registerClient } from '../oauth/clients.ts';
import { exceeded, rateLimitHeaders } from '../access/rate-limit.ts';
import { consentPage, signConsent, verifyConsent, type AuthorizationRequest } from '../oauth/consent.ts';
import { OAuthError, createGrantWithCode, exchangeCode, refreshTokens, revokeGrant, grantOfToken } from '../oauth/grants.ts';
import { requireScope } from './request-scope.ts';

/** Each site is its own authorization server, at its own host. */
const issuerOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;
export const mcpResourceOf = (request: FastifyRequest) => `${issuerOf(request)}/api/mcp`;
export const protectedResourceMetadataUrl = (request: FastifyRequest) => `${issuerOf(request)}/.well-known/oauth-protected-resource/api/mcp`;
const resourcesOf = (request: FastifyRequest) => [mcpResourceOf(request), `${issuerOf(request)}/api/manage/v1`];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const redirectUri = z
  .string()
  .max(2_000)
  .pipe(z.url())
  .refine((value) => {
    const url = new URL(value);
    return !url.hash && !url.username && !url.password && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)));
  }, 'must be https, or http on a loopback address, without a fragment or credentials');

/** Registration is open to anyone (RFC 7591), so everything it stores is bounded (docs/access.md). */
const Registration = z.object({
  redirect_uris: z.array(redirectUri).min(1).max(10),
  client_name: z.string().min(1).max(200).optional(),
  token_endpoint_auth_method: z.literal('none').optional(),
});
/** Registrations per client IP and minute, on every gateway together (the shared rate counters). */
export const REGISTRATIONS_PER_IP_PER_MIN = 10;
/** Ten redirect URIs at their longest and a name fit; anything larger is refused before parsing (413). */
const REGISTRATION_BODY_LIMIT = 32 * 1024;

const AuthorizeQuery = z.object({
  response_type: z.literal('code'),
  client_id: z.string().min(1),
  redirect_uri: z.string().min(1),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be an S256 challenge'),
  code_challenge_method: z.literal('S256'),
  scope: z.string().optional(),
  resource: z.string().optional(),
  state: z.string().max(500).optional(),
});

/**
 * An error of `GET /oauth/authorize`, answered here and never by redirecting to the client: any
 * visitor can register a client with a redirect URI of their choosing, so sending the browser there
 * unasked would make this site an open redirect (RFC 9700, 4.11.2). Only the user's own decision
 * on the consent page (`POST /oauth/authorize`) sends the browser to the client.
 */
function authorizeError(reply: FastifyReply, error: string, description: string) {
  return reply.code(400).header('cache-control', 'no-store').send({ error, error_description: description });
}

function redirectWith(reply: FastifyReply, target: string, params: Record<string, string | undefined>) {
  const url = new URL(target);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return reply.code(302).header('location', url.toString()).send();
}

/**
 * OAuth 2.1 for agent clients: discovery metadata (RFC 8414, RFC 9728), dynamic client registration
 * (RFC 7591), authorization code + PKCE S256 with a consent page behind the administrator sign-in,
 * rotating refresh tokens, resource indicators (RFC 8707) and revocation (RFC 7009).
 * These are protocol endpoints (redirects, form bodies), so they live here rather than in the
 * operation registry.
 */
export async function oauthExtension(app: FastifyInstance, services: Services, gate: AccessGate): Promise<void> {
  await app.register(async (scoped) => {
    scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    scoped.get('/.well-known/oauth-authorization-server', async (request) => {
      const issuer = issuerOf(request);
      return {
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        registration_endpoint: `${issuer}/oauth/register`,
        revocation_endpoint: `${issuer}/oauth/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        scopes_supported: CAPABILITIES,
      };
    });

    const resourceMetadata = async (request: FastifyRequest) => ({
      resource: mcpResourceOf(request),
      authorization_servers: [issuerOf(request)],
      bearer_methods_supported: ['header'],
      scopes_supported: CAPABILITIES,
    });
    scoped.get('/.well-known/oauth-protected-resource', resourceMetadata);
    scoped.get('/.well-known/oauth-protected-resource/api/mcp', resourceMetadata);

    scoped.post('/oauth/register', { bodyLimit: REGISTRATION_BODY_LIMIT }, async (request, reply) => {
      const scope = requireScope(request);
      const db = services.workspaceDb(scope.workspace);
      const now = services.clock.now();
      // Counted before anything else, malformed attempts included: guessing costs the same budget.
      const rate = await services.rateCounters.hit(db, scope.site._id, 'register', `oauth-register:ip:${request.ip}`, REGISTRATIONS_PER_IP_PER_MIN, now);
      reply.headers(rateLimitHeaders([rate]));
      if (exceeded(rate)) throw new TooManyRequestsError(rate.resetSeconds);
      const parsed = Registration.safeParse(request.body ?? {});
      if (!parsed.success) return reply.code(400).send({ error: 'invalid_client_metadata', error_description: formatZodError(parsed.error) });
      const client = await registerClient(db, scope.site._id, parsed.data.client_name ?? 'MCP client', parsed.data.redirect_uris, now);
      return reply.code(201).send({
        client_id: client._id,
        client_name: client.name,
        redirect_uris: client.redirectUris,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
    });

    scoped.get('/oauth/authorize', async (request, reply) => {
      const scope = requireScope(request);
      const db = services.workspaceDb(scope.workspace);
      const query = (request.query ?? {}) as Record<string, string>;
      const client = typeof query.client_id === 'string' ? await findClient(db, scope.site._id, query.client_id) : null;
      // Exactly one of the client's registered URIs (compared as strings: no prefix, no added query).
      if (!client || typeof query.redirect_uri !== 'string' || !client.redirectUris.includes(query.redirect_uri)) {
        throw new BadRequestError('Unknown client or redirect_uri');
      }
      const parsed = AuthorizeQuery.safeParse(query);
      if (!parsed.success) return authorizeError(reply, 'invalid_request', formatZodError(parsed.error));
      const resource = parsed.data.resource ?? mcpResourceOf(request);
      if (!resourcesOf(request).includes(resource)) return authorizeError(reply, 'invalid_target', 'Unknown resource');

      const principal = await gate.authenticate('admin', credentialsOf(request), scope);
      if (principal.kind !== 'user') {
        // Back here after signing in: a path on this origin, rebuilt from the validated request.
        const next = `/oauth/authorize?${new URLSearchParams(Object.entries(parsed.data).filter((entry): entry is [string, string] => entry[1] !== undefined))}`;
        return reply
          .code(302)
          .header('location', `/admin?next=${encodeURIComponent(next)}`)
          .send();
      }
      const requested = parsed.data.scope ? parsed.data.scope.split(/\s+/).filter(Boolean) : [...principal.capabilities];
      if (requested.some((capability) => !principal.capabilities.has(capability as Capability))) {
        return authorizeError(reply, 'invalid_scope', 'The requested scope exceeds what you hold');
      }
      const authorization: AuthorizationRequest = {
        clientId: client._id,
        redirectUri: parsed.data.redirect_uri,
        codeChallenge: parsed.data.code_challenge,
        scope: requested,
        resource,
        state: parsed.data.state,
      };
      const consent = signConsent(services.config.SECRET_KEY, principal.userId, authorization, services.clock.now());
      return reply
        .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(consentPage({ clientName: client.name, scope: requested, resource, redirectUri: parsed.data.redirect_uri, consent }));
    });

    scoped.post('/oauth/authorize', async (request, reply) => {
      const scope = requireScope(request);
      // The admin gate checks the Origin of this cookie-authenticated POST (CSRF).
      const principal = await gate.authenticate('admin', credentialsOf(request), scope);
      if (principal.kind !== 'user') throw new UnauthorizedError();
      const body = (request.body ?? {}) as Record<string, string>;
      const authorization = verifyConsent(services.config.SECRET_KEY, principal.userId, String(body.consent ?? ''), services.clock.now());
      if (!authorization) throw new BadRequestError('Invalid or expired consent');
      if (body.decision !== 'approve') {
        return redirectWith(reply, authorization.redirectUri, { error: 'access_denied', state: authorization.state });
      }
      const code = await createGrantWithCode(
        services.workspaceDb(scope.workspace),
        scope.site._id,
        { ...authorization, userId: principal.userId, scope: authorization.scope as Capability[] },
        services.clock.now(),
      );
      return redirectWith(reply, authorization.redirectUri, { code, state: authorization.state, iss: issuerOf(request) });
    });

    scoped.post('/oauth/token', async (request, reply) => {
      const scope = requireScope(request);
      const db = services.workspaceDb(scope.workspace);
      const body = (request.body ?? {}) as Record<string, string>;
      reply.header('cache-control', 'no-store');
      try {
        if (body.grant_type === 'authorization_code') {
          if (!body.code || !body.client_id || !body.redirect_uri || !body.code_verifier) {
            throw new OAuthError('invalid_request', 'code, client_id, redirect_uri and code_verifier are required');
          }
          return await exchangeCode(
            db,
            scope.site._id,
            { code: body.code, clientId: body.client_id, redirectUri: body.redirect_uri, codeVerifier: body.code_verifier, resource: body.resource },
            services.clock.now(),
          );
        }
        if (body.grant_type === 'refresh_token') {
          if (!body.refresh_token || !body.client_id) throw new OAuthError('invalid_request', 'refresh_token and client_id are required');
          return await refreshTokens(db, scope.site._id, { refreshToken: body.refresh_token, clientId: body.client_id }, services.clock.now());
        }
        throw new OAuthError('unsupported_grant_type', 'Unsupported grant_type');
      } catch (error) {
        if (error instanceof OAuthError) return reply.code(400).send({ error: error.code, error_description: error.message });
        throw error;
      }
    });

    scoped.post('/oauth/revoke', async (request, reply) => {
      const scope = requireScope(request);
      const db = services.workspaceDb(scope.workspace);
      const token = String(((request.body ?? {}) as Record<string, string>).token ?? '');
      const grant = await grantOfToken(db, scope.site._id, token, services.clock.now(), ['access', 'refresh']);
      if (grant) await revokeGrant(db, scope.site._id, grant._id, services.clock.now());
      // RFC 7009: the answer is the same whether or not the token was valid.
      return reply.code(200).send({});
    });
  });
}

function credentialsOf(request: FastifyRequest) {
  return {
    authorization: undefined,
    cookies: request.cookies ?? {},
    ip: request.ip,
    origin: request.headers.origin,
    method: request.method,
  };
}
