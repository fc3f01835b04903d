import { z } from 'zod';
import type { OperationContext } from './context.ts';
import type { Requirement } from './capabilities.ts';
import { isPlatformCapability, requiredCapabilities } from './capabilities.ts';
import { hasCapability } from './principal.ts';
import { findUnsafeKey } from './safe-keys.ts';
import { BadRequestError, ForbiddenError, UnauthorizedError } from './errors.ts';
import { contractChecksOn } from './config.ts';
import { scopeGuard, UndeclaredScopeError, type ScopeDeclaration } from './scope.ts';
import type { AuditDeclaration } from './audit-notes.ts';

/**
 * `public` is the read-only Public Content API (GET only, contract 4); `comments` is the anonymous
 * comment submission API beside it, with its own switch, limit and document; `manage` the bearer
 * API; `admin` the cookie-session API of the admin UI.
 */
export type Surface = 'public' | 'comments' | 'manage' | 'admin';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** 409: conflicts (a slug taken, a state that forbids the change); 502/503: a dependency failed. */
export type DomainErrorStatus = 403 | 409 | 413 | 416 | 502 | 503;

/**
 * One operation, declared once. REST routes, OpenAPI, MCP tools and tests are all derived from it.
 * `input` is one zod object holding path params, query and body fields together (path params by
 * name, then query for GET/DELETE or body otherwise), so an MCP tool takes the same object.
 */
export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  id: string;
  surface: Surface;
  method: HttpMethod;
  /** Fastify-style path relative to the surface base, e.g. `/content/:id`. */
  path: string;
  summary: string;
  description?: string;
  requires: Requirement;
  input: I;
  output: O;
  /** Success status; 200 unless stated. */
  status?: 200 | 201 | 202 | 204;
  /**
   * Error statuses the handler itself can answer beyond those every operation of its kind can
   * (`core/statuses.ts` derives 400, 401, 403, 404, 413, 414, 415, 429 and the `expectedVersion`
   * 409 from the rest of the definition). The OpenAPI entry declares exactly these.
   */
  errors?: readonly DomainErrorStatus[];
  /** Every event the handler may emit (`ctx.emit`); checked in tests and development. */
  events?: readonly string[];
  /**
   * Key scope over the documents the operation reads or writes (core/scope.ts): which field holds
   * the type, the locale, the owner. The runner hands the handler `ctx.scope` built from it; an
   * operation needing a content, media, comments or analytics capability must declare it.
   */
  scope?: ScopeDeclaration;
  /** Expensive routes (uploads, activations, exports) pass through the extra limiter too. */
  heavy?: boolean;
  /** An extra per-operation limit enforced by the gate's `admit` (public search: 60/min per IP). */
  rateLimit?: { perMinute: number; by: 'ip' };
  /**
   * `multipart`: the REST adapter hands the handler a `file` stream (media upload); `ndjson`: the
   * raw `application/x-ndjson` body as an `upload` stream, never read whole (content import).
   */
  body?: 'json' | 'multipart' | 'ndjson';
  /**
   * The operation answers a file, not JSON: its handler returns a `FileReply` (core/file-reply.ts)
   * and OpenAPI lists these content types. Such operations are not MCP tools.
   */
  produces?: { contentTypes: readonly string[]; ranges?: boolean };
  /** The plugin a mounted plugin operation belongs to (plugins/routes.ts hides it where inactive). */
  plugin?: string;
  /** Not exposed as an MCP tool (e.g. binary uploads). */
  hiddenFromTools?: boolean;
  /**
   * A keyed GET whose answer a gateway may hold per key and URL and send again without running it
   * (docs/access.md, "Held management reads"): its answer depends on nothing but the URL, the key
   * and these collections of the workspace database. Held until a write to one of them finishes in
   * any process, or the key's access changes. Checked: test/access/held-reads.test.ts reads them.
   */
  heldAnswer?: { reads: readonly string[] };
  /**
   * The audit row the runner writes after every successful non-GET run (docs/audit.md): its target,
   * action and summary. Defaults fit most operations; `false` for a POST that changes nothing (a preview).
   */
  audit?: false | AuditDeclaration<z.output<I>, z.input<O>>;
  handler(ctx: OperationContext, input: z.output<I>): Promise<z.input<O>>;
}

/** `/content/:id` → `/content/{id}` (OpenAPI), and the path's parameter names. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
export const pathParamNames = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

export function defineOperation<I extends z.ZodType, O extends z.ZodType>(operation: Operation<I, O>): Operation<I, O> {
  return operation;
}

/** Deny by default: a requirement the principal does not meet is 401 (nobody) or 403 (somebody). */
export function authorize(operation: Operation, ctx: OperationContext): void {
  const { principal } = ctx;
  if (operation.requires === 'public' || principal.kind === 'system') return;
  if (principal.kind === 'anonymous') throw new UnauthorizedError();
  for (const capability of requiredCapabilities(operation.requires)) {
    if (!hasCapability(principal, capability)) throw new ForbiddenError();
    // Belt and braces: a platform capability also needs the owner to be an operator right now.
    if (isPlatformCapability(capability) && !principal.isPlatformOperator) throw new ForbiddenError();
  }
}

export function formatZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function parseInput<I extends z.ZodType>(operation: Operation<I>, raw: unknown): z.output<I> {
  const unsafe = findUnsafeKey(raw);
  if (unsafe) throw new BadRequestError(unsafe);
  const result = operation.input.safeParse(raw ?? {});
  if (!result.success) throw new BadRequestError(formatZodError(result.error));
  return result.data;
}

/** A handler broke its own definition (answer outside `output`, undeclared event): a 500 in tests. */
export class ContractViolationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolationError';
  }
}

function violation(ctx: OperationContext, operation: Operation, message: string): ContractViolationError {
  const error = new ContractViolationError(`operation ${operation.id}: ${message}`);
  ctx.services.log.error({ operation: operation.id, requestId: ctx.request.id }, `contract violation: ${error.message}`);
  return error;
}

/**
 * The handler's view of the context: `scope` built from the operation's declaration and, while
 * contract checks are on (config `CHECK_CONTRACTS`), an `emit` that refuses undeclared events.
 */
function operationContext(operation: Operation, ctx: OperationContext, checking: boolean): OperationContext {
  // Production, no declaration (every public read): the context as built, nothing allocated. Its
  // `scope` still refuses a key (contextScope); the strict refusal runs in tests.
  if (!checking && operation.scope === undefined) return ctx;
  const scope = scopeGuard(ctx.principal, operation.scope, `operation ${operation.id}`);
  if (!checking) return { ...ctx, scope };
  const declared = operation.events ?? [];
  return {
    ...ctx,
    scope,
    emit: (event, data) => {
      if (!declared.includes(event)) return Promise.reject(violation(ctx, operation, `emitted ${event}, which its events list does not declare`));
      return ctx.emit(event, data);
    },
  };
}

function checkOutput(ctx: OperationContext, operation: Operation, result: unknown): void {
  // A file answer (FileReply) and an empty 204 are not JSON bodies: nothing to compare.
  if (operation.produces || operation.status === 204) return;
  const parsed = operation.output.safeParse(result);
  if (!parsed.success) throw violation(ctx, operation, `answer does not match its output schema (${formatZodError(parsed.error)})`);
}

/**
 * The one way to run an operation: authorize, validate, apply the declared scope, handle, and
 * (in tests and development) check the answer and the emitted events against the definition.
 * Used by every surface (through http/run-operation.ts) and by tests.
 */
export async function invokeOperation<I extends z.ZodType, O extends z.ZodType>(
  operation: Operation<I, O>,
  ctx: OperationContext,
  raw: unknown,
  /** Called with the parsed input and the answer once the operation succeeded (the runner's audit row). */
  succeeded?: (input: z.output<I>, result: z.input<O>) => void,
): Promise<z.input<O>> {
  const op = operation as unknown as Operation;
  authorize(op, ctx);
  const input = parseInput(operation, raw);
  const checking = contractChecksOn(ctx.services.config);
  let result: z.input<O>;
  try {
    result = await operation.handler(operationContext(op, ctx, checking), input);
  } catch (error) {
    if (error instanceof UndeclaredScopeError) throw violation(ctx, op, error.message);
    throw error;
  }
  if (checking) checkOutput(ctx, op, result);
  succeeded?.(input, result);
  return result;
}
