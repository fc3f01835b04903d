import { z } from 'zod';
import type { OperationContext } from './context.ts';
import type { Requirement } from './capabilities.ts';
import { isPlatformCapability, requiredCapabilities } from './capabilities.ts';
import { hasCapability } from './principal.ts';
import { findUnsafeKey } from './safe-keys.ts';
import { BadRequestError, ForbiddenError, UnauthorizedError } from './errors.ts';

/**
 * `public` is the read-only Public Content API (GET only, contract 4); `comments` is the anonymous
 * comment submission API beside it, with its own switch, limit and document; `manage` the bearer
 * API; `admin` the cookie-session API of the admin UI.
 */
export type Surface = 'public' | 'comments' | 'manage' | 'admin';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** 409: conflicts (a slug taken, a state that forbids the change); 502/503: a dependency failed. */
export type DomainErrorStatus = 403 | 409 | 413 | 502 | 503;

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
  events?: readonly string[];
  /** Expensive routes (uploads, activations, exports) pass through the extra limiter too. */
  heavy?: boolean;
  /** An extra per-operation limit enforced by the gate's `admit` (public search: 60/min per IP). */
  rateLimit?: { perMinute: number; by: 'ip' };
  /** `multipart`: the REST adapter hands the handler a `file` stream (media upload). */
  body?: 'json' | 'multipart';
  /** Not exposed as an MCP tool (e.g. binary uploads). */
  hiddenFromTools?: boolean;
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

/** The one way to run an operation: authorize, validate, handle. Used by every surface and by tests. */
export async function invokeOperation<I extends z.ZodType, O extends z.ZodType>(
  operation: Operation<I, O>,
  ctx: OperationContext,
  raw: unknown,
): Promise<z.input<O>> {
  authorize(operation as unknown as Operation, ctx);
  const input = parseInput(operation, raw);
  return operation.handler(ctx, input);
}
