import type { Operation } from './operation.ts';

/** What each error status means, as the OpenAPI documents say it. */
export const STATUS_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Invalid input (the message names the field), malformed JSON or multipart body',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict (a unique value taken, a version mismatch, a state that forbids the change)',
  413: 'Request body too large',
  414: 'A path parameter longer than its documented maxLength',
  415: 'Unsupported request content type',
  416: 'Range not satisfiable (Content-Range names the size)',
  423: 'Workspace suspended (every non-public surface of a suspended workspace; docs/lifecycle.md)',
  429: 'Rate limited (see Retry-After)',
  502: 'A dependency answered wrongly',
  503: 'An engine (database, workflow engine) or a dependency is unavailable (see Retry-After)',
};

/** Longest accepted path parameter, in URL characters; documented as each one's maxLength. */
export const MAX_PATH_PARAM_LENGTH = 200;

const hasPathParams = (operation: Operation) => operation.path.includes(':');
const takesBody = (operation: Operation) => operation.method !== 'GET' && operation.method !== 'DELETE';
const inputFields = (operation: Operation): readonly string[] => {
  const shape = (operation.input as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
};

/**
 * Every error status an operation can answer, derived from its definition so the documents cannot
 * drift from what the adapters do: validation (400) and unknown resources (404) everywhere; the
 * gate's 401/403/429 where a principal is needed; 429 where the operation has its own limit; the
 * body parser's 413/415 where there is a body; 423 off the public surface (suspended workspace); the router's 414 where there are path parameters;
 * 409 where an `expectedVersion` can mismatch; 503 everywhere (every operation reaches MongoDB,
 * through its handler or the gate's authentication, and answers 503 once it waited ENGINE_WAIT_MS
 * for a missing engine: core/engines.ts); and what the handler declares in `errors`.
 */
export function errorStatuses(operation: Operation): number[] {
  const statuses = new Set<number>([400, 404, 503]);
  if (operation.requires !== 'public' || operation.surface === 'manage' || operation.surface === 'admin') [401, 403, 429].forEach((s) => statuses.add(s));
  // A suspended workspace: its public API answers 404 (already listed), every other surface 423.
  if (operation.surface !== 'public') statuses.add(423);
  // Public calls count against their workspace's `requestsPerMinute` quota (tenancy/quota-guard.ts).
  if (operation.rateLimit || operation.heavy || operation.surface === 'public') statuses.add(429);
  if (takesBody(operation)) [413, 415].forEach((s) => statuses.add(s));
  if (hasPathParams(operation)) statuses.add(414);
  if (inputFields(operation).includes('expectedVersion')) statuses.add(409);
  for (const status of operation.errors ?? []) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}
