import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../core/context.ts';
import { BadRequestError } from '../core/errors.ts';
import type { Operation, Surface } from '../core/operation.ts';
import type { AccessGate } from '../access/gate.ts';
import { requestFacts, requireScope } from './request-scope.ts';
import { sendJsonWithEtag } from './etag.ts';
import type { PublicLane } from './public-lane.ts';
import type { ManageLane } from './manage-lane.ts';
import type { FileReply } from '../core/file-reply.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createOperationRunner } from './run-operation.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    operation?: Operation;
  }
}

export interface SurfaceOptions {
  surface: Surface;
  basePath: string;
  title: string;
  version: string;
  operations: readonly Operation[];
  services: Services;
  gate: AccessGate;
  /** The public cache-hit lane: routes keep their answers there. */
  lane: PublicLane;
  /** The management lane: `heldAnswer` routes keep their keyed answers there. */
  manageLane: ManageLane;
  /** Serve `openapi.json` under the base path (public and manage surfaces). */
  openapi?: boolean;
}

/** The uploaded file part; a body the multipart parser cannot read (no boundary, cut short) is a 400. */
async function readUpload(request: FastifyRequest) {
  try {
    return await request.file();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 413) throw error;
    throw new BadRequestError(`file: unreadable multipart body (${(error as Error).message})`);
  }
}

async function collectInput(operation: Operation, request: FastifyRequest): Promise<Record<string, unknown>> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (operation.body === 'multipart') {
    const file = request.isMultipart() ? await readUpload(request) : undefined;
    const fields: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(file?.fields ?? {})) {
      if (field && !Array.isArray(field) && field.type === 'field') fields[name] = field.value;
    }
    return {
      ...query,
      ...fields,
      ...params,
      file: file ? { filename: file.filename, declaredType: file.mimetype, stream: file.file } : undefined,
    };
  }
  if (operation.body === 'ndjson') {
    return { ...query, ...params, upload: request.body instanceof Readable ? { stream: request.body } : undefined };
  }
  // A stream body (an NDJSON upload sent to another route) holds no fields.
  const body = request.body && typeof request.body === 'object' && !Array.isArray(request.body) && !(request.body instanceof Readable) ? request.body : {};
  return { ...query, ...(body as Record<string, unknown>), ...params };
}

/**
 * Mounts every operation of one surface as a Fastify route. No business logic lives here: the
 * route maps the request to a call of the operation runner (./run-operation.ts) and its answer back.
 */
export async function mountSurface(app: FastifyInstance, options: SurfaceOptions): Promise<void> {
  const { services, gate, surface } = options;
  const runner = createOperationRunner(services, gate);
  const operations = options.operations.filter((op) => op.surface === surface);

  await app.register(
    async (scoped) => {
      for (const operation of operations) {
        const laneSlot = options.lane.slot(operation);
        const heldSlot = options.manageLane.slot(operation);
        scoped.route({
          method: operation.method,
          url: operation.path,
          config: { operation },
          handler: async (request: FastifyRequest, reply: FastifyReply) => {
            // A held answer was sent before Fastify saw the request (public-lane.ts); this one may be kept.
            const keepPublic = laneSlot?.(request);
            const ctx = await runner.open({
              surface,
              credentials: {
                authorization: request.headers.authorization,
                cookies: request.cookies ?? {},
                ip: request.ip,
                origin: request.headers.origin,
                method: request.method,
                resources: [`${request.protocol}://${request.host}${options.basePath}`],
                counted: options.manageLane.countedFor(request.raw),
              },
              scope: requireScope(request),
              request: requestFacts(request),
            });
            // Taken before the operation runs, so a write finishing meanwhile keeps its answer out.
            const keep = keepPublic ?? heldSlot?.(request, ctx.principal);
            const { value: result, headers } = await runner.run(ctx, operation, await collectInput(operation, request));
            reply.headers(headers);
            if (operation.produces) {
              const file = result as FileReply;
              reply.code(file.status).headers(file.headers);
              return reply.send(file.body ?? undefined);
            }
            const status = operation.status ?? 200;
            if (status === 204) return reply.code(204).send();
            if (operation.method === 'GET') return sendJsonWithEtag(request, reply, result, keep);
            return reply.code(status).send(result);
          },
        });
      }

      if (options.openapi) {
        const base = buildOpenApiDocument(surface, operations, {
          title: options.title,
          version: options.version,
          basePath: options.basePath,
          serverUrl: services.config.PUBLIC_BASE_URL,
        });
        scoped.get('/openapi.json', async (request) => {
          // Filters run per request so an activated plugin's routes appear without a restart.
          const copy = structuredClone(base);
          return services.hooks.applyFilters('openapi.document', copy, { surface, siteId: request.siteScope?.site._id });
        });
      }
    },
    { prefix: options.basePath },
  );
}
