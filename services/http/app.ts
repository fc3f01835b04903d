import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { Services } from '../core/context.ts';
import { loggerOptions } from '../core/logger.ts';
import type { AccessGate } from '../access/gate.ts';
import { installErrorHandling, sendError } from './errors.ts';
import { MAX_PATH_PARAM_LENGTH } from '../core/statuses.ts';
import { requestScopePlugin } from './request-scope.ts';
import { sessionTwins } from './session-twins.ts';
import { mountSurface } from './rest.ts';
import { createPublicLane } from './public-lane.ts';
import { createManageLane } from './manage-lane.ts';
import { laneServerFactory } from './lane-server.ts';
import { requestIdOf } from './request-id.ts';
import { installRequestTelemetry, requestSpans, tracedRequestLogger } from './request-telemetry.ts';
import { serviceVersion } from '../core/version.ts';
import { trustsProxy } from '../core/proxy-trust.ts';
import { NDJSON_CONTENT_TYPE } from '../core/ndjson.ts';

export interface AppOptions {
  services: Services;
  gate: AccessGate;
  /** Extra route plugins (admin pages, MCP, GraphQL, media files), registered after the surfaces. */
  extensions?: ReadonlyArray<(app: FastifyInstance, services: Services, gate: AccessGate) => Promise<void>>;
  logger?: boolean;
}

/** The access log: one line per request ("request completed": status and time), not Fastify's two. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
}

/** Builds the whole HTTP app. It never listens: `services/gateway.ts` does, tests use `inject`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services, gate } = options;
  const { config } = services;
  const app = Fastify({
    // No per-line mixin: traced, a request's logger carries its trace ids itself (request-telemetry.ts).
    logger: options.logger === false ? false : loggerOptions(config.LOG_LEVEL),
    ...(services.tracing.enabled ? { childLoggerFactory: tracedRequestLogger } : {}),
    bodyLimit: config.BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: sendError,
    logController: new OneLinePerRequest(),
    // The lanes in front apply the same rule to the same headers (core/proxy-trust.ts).
    trustProxy: trustsProxy(config.TRUST_PROXY),
    genReqId: requestIdOf,
    // A repeated anonymous public read, or a held keyed read, is answered before Fastify sees it (lane-server.ts).
    serverFactory: laneServerFactory(() => ({ publicLane: lane, manageLane }), requestSpans(services)),
  });
  const lane = createPublicLane(services, gate.lanes, () => app.log);
  const manageLane = createManageLane(services, gate.lanes, () => app.log);
  app.decorate('publicLane', lane);
  app.decorate('manageLane', manageLane);

  installErrorHandling(app, services.engines);
  installRequestTelemetry(app, services);
  // A callback hook, not an async one: this runs on every request, and it never waits.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  await app.register(cookie);
  // fileSize: Infinity because the media upload enforces the per-site size limit while streaming.
  await app.register(multipart, { limits: { files: 1, fields: 20, fieldSize: 64 * 1024, fileSize: Infinity } });
  // NDJSON bodies (the content import) stay a stream: the operation stores them as it reads them, with its own size limit.
  app.addContentTypeParser(NDJSON_CONTENT_TYPE, (_request, payload, done) => done(null, payload));
  await app.register(requestScopePlugin, { resolver: services.sites, listenHost: services.config.HOST, engines: services.engines });

  app.get('/healthz', { config: { siteless: true } }, async () => services.engines.report());

  const operations = services.features.flatMap((feature) => feature.operations);
  const common = { services, gate, lane, manageLane, operations, version: serviceVersion };
  await mountSurface(app, { ...common, surface: 'public', basePath: '/api/v1', title: 'Public Content API', openapi: true });
  await mountSurface(app, { ...common, surface: 'comments', basePath: '/api/comments/v1', title: 'Public Comments API', openapi: true });
  await mountSurface(app, { ...common, surface: 'manage', basePath: '/api/manage/v1', title: 'Management API', openapi: true });
  await mountSurface(app, { ...common, operations: [...operations, ...sessionTwins(operations)], surface: 'admin', basePath: '/api', title: 'Administration' });

  for (const extension of options.extensions ?? []) await extension(app, services, gate);
  return app;
}
