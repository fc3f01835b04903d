import type { FastifyInstance, FastifyRequest } from 'fastify';
import mercurius from 'mercurius';
import { GraphQLError } from 'graphql';
import type { Services, OperationContext } from '../core/context.ts';
import type { Operation } from '../core/operation.ts';
import { AppError, NotFoundError } from '../core/errors.ts';
import type { AccessGate } from '../access/gate.ts';
import { requestFacts, requireScope } from './request-scope.ts';
import { createOperationRunner } from './run-operation.ts';
import { JsonScalar, typeDefs } from '../content/graphql-schema.ts';
import { costLimitRule } from '../content/graphql-cost.ts';
import { publicContentTypesOp, publicGetContentOp, publicListContentOp, publicSearchOp } from '../content/public-content-ops.ts';
import { publicGetMenuOp, publicListMenusOp } from '../menus/public-ops.ts';

export const GRAPHQL_PATH = '/api/v1/graphql';
export const MAX_QUERY_DEPTH = 8;

declare module 'fastify' {
  interface FastifyRequest {
    /** Opened once per GraphQL request (authenticated, switches checked); every resolver runs in it. */
    graphqlContext?: OperationContext;
  }
}

interface GraphqlContext {
  request: FastifyRequest;
  run(operation: Operation, input: Args): Promise<unknown>;
}

type Args = Record<string, unknown>;
const previewFlag = (args: Args) => (args.preview === true ? { preview: '1' } : {});
const defined = (args: Args) => Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== undefined && v !== null && k !== 'preview'));

/**
 * The GraphQL adapter: every resolver runs the same public operation as REST through the operation
 * runner (./run-operation.ts), so admission (rate limits, e.g. search), visibility, locale, preview
 * and cache rules are the REST ones. No business logic here.
 */
function resolvers() {
  const run = (ctx: GraphqlContext, operation: Operation, input: Args) => ctx.run(operation, input);
  const orNull = async <T>(promise: Promise<T>) => {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  };
  return {
    JSON: JsonScalar,
    Query: {
      content: (_: unknown, args: Args, ctx: GraphqlContext) => run(ctx, publicListContentOp, { ...defined(args), ...previewFlag(args) }),
      entry: (_: unknown, args: Args, ctx: GraphqlContext) => orNull(run(ctx, publicGetContentOp, { ...defined(args), ...previewFlag(args) })),
      contentTypes: async (_: unknown, _args: Args, ctx: GraphqlContext) => ((await run(ctx, publicContentTypesOp, {})) as { types: unknown[] }).types,
      menus: (_: unknown, args: Args, ctx: GraphqlContext) => run(ctx, publicListMenusOp, defined(args)),
      menu: (_: unknown, args: Args, ctx: GraphqlContext) => orNull(run(ctx, publicGetMenuOp, defined(args))),
      search: (_: unknown, args: Args, ctx: GraphqlContext) => run(ctx, publicSearchOp, defined(args)),
    },
  };
}

/** Mercurius at `/api/v1/graphql`, in its own encapsulated context so its hook guards only this route. */
export async function graphqlExtension(app: FastifyInstance, services: Services, gate: AccessGate): Promise<void> {
  const runner = createOperationRunner(services, gate);
  await app.register(async (scoped) => {
    // Same door as REST: 404 when the Public API is off, a `user` principal (for previews) when a
    // valid session cookie is sent, then the platform's GraphQL switch.
    // A refusal here reaches the error handler below, which answers in the REST shape.
    scoped.addHook('preHandler', async (request) => {
      request.graphqlContext = await runner.open({
        surface: 'public',
        credentials: {
          authorization: request.headers.authorization,
          cookies: request.cookies ?? {},
          ip: request.ip,
          origin: request.headers.origin,
          method: request.method,
        },
        scope: requireScope(request),
        request: requestFacts(request),
        transportSwitch: 'graphql',
      });
    });
    await scoped.register(mercurius, {
      schema: typeDefs,
      resolvers: resolvers() as never,
      path: GRAPHQL_PATH,
      graphiql: false,
      queryDepth: MAX_QUERY_DEPTH,
      validationRules: [costLimitRule()],
      // A refusal before GraphQL runs (unknown or suspended site from the Host hook, the gate, a
      // switch) answers in the REST shape with its status; mercurius would wrap it in a 200.
      errorHandler: (error, _request, reply) => {
        if (error instanceof AppError) {
          void reply.code(error.status).headers(error.headers).send({ error: error.message });
          return;
        }
        const graphqlError = error instanceof GraphQLError ? error : new GraphQLError(error.message, { originalError: error });
        const { statusCode, response } = mercurius.defaultErrorFormatter({ errors: [graphqlError] }, { reply, app: scoped } as never);
        void reply.code(statusCode).send(response);
      },
      context: (request, reply): GraphqlContext => {
        const operationContext = request.graphqlContext!;
        return {
          request,
          async run(operation, input) {
            const { value, headers } = await runner.run(operationContext, operation, input);
            reply.headers(headers);
            return value;
          },
        };
      },
    });
  });
}
