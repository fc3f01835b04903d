import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertSwitch } from '../platform/quota-guard.ts';
import mercurius from 'mercurius';
import type { Services, OperationContext } from '../core/context.ts';
import { createContext } from '../core/context.ts';
import { invokeOperation, type Operation } from '../core/operation.ts';
import { AppError, NotFoundError } from '../core/errors.ts';
import type { AccessGate } from '../access/gate.ts';
import type { Principal } from '../core/principal.ts';
import { requestFacts, requireScope } from './request-scope.ts';
import { JsonScalar, typeDefs } from '../content/graphql-schema.ts';
import { costLimitRule } from '../content/graphql-cost.ts';
import { publicContentTypesOp, publicGetContentOp, publicListContentOp, publicSearchOp } from '../content/public-content-ops.ts';
import { publicGetMenuOp, publicListMenusOp } from '../menus/public-ops.ts';

export const GRAPHQL_PATH = '/api/v1/graphql';
export const MAX_QUERY_DEPTH = 8;

declare module 'fastify' {
  interface FastifyRequest {
    graphqlPrincipal?: Principal;
  }
}

interface GraphqlContext {
  request: FastifyRequest;
  operationContext: OperationContext;
  admit(operation: Operation): Promise<void>;
}

type Args = Record<string, unknown>;
const previewFlag = (args: Args) => (args.preview === true ? { preview: '1' } : {});
const defined = (args: Args) => Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== undefined && v !== null && k !== 'preview'));

/**
 * The GraphQL adapter: every resolver runs the same public operation as REST (through
 * `invokeOperation`, so visibility, locale, preview and cache rules are the REST ones), after the
 * gate admitted it (rate limits, e.g. search). No business logic here.
 */
function resolvers() {
  const run = async (ctx: GraphqlContext, operation: Operation, input: Args) => {
    await ctx.admit(operation);
    return invokeOperation(operation, ctx.operationContext, input);
  };
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
  await app.register(async (scoped) => {
    // Same door as REST: the gate answers 404 when the Public API is off, and gives a `user`
    // principal (for previews) when a valid session cookie is sent.
    scoped.addHook('preHandler', async (request, reply) => {
      try {
        request.graphqlPrincipal = await gate.authenticate(
          'public',
          { authorization: request.headers.authorization, cookies: request.cookies ?? {}, ip: request.ip, origin: request.headers.origin, method: request.method },
          requireScope(request),
        );
        assertSwitch(requireScope(request), 'graphql');
      } catch (error) {
        // Answered here, in the REST shape: mercurius's own error handler would wrap it in a 200.
        if (!(error instanceof AppError)) throw error;
        return reply.code(error.status).headers(error.headers).send({ error: error.message });
      }
    });
    await scoped.register(mercurius, {
      schema: typeDefs,
      resolvers: resolvers() as never,
      path: GRAPHQL_PATH,
      graphiql: false,
      queryDepth: MAX_QUERY_DEPTH,
      validationRules: [costLimitRule()],
      context: (request, reply): GraphqlContext => {
        const operationContext = createContext(services, requireScope(request), request.graphqlPrincipal!, requestFacts(request));
        return {
          request,
          operationContext,
          async admit(operation) {
            reply.headers(await gate.admit(operationContext, operation));
          },
        };
      },
    });
  });
}
