import type { Operation } from '../core/operation.ts';

/**
 * The operator console (`/admin/platform`) works on the cookie session, so it needs the platform
 * operations on the admin surface too. Each is the same definition (handler, input, output, the
 * platform requirement) mounted a second time under `/api/platform/…`; like the webhook endpoints
 * on both surfaces, nothing is written twice. Admin-surface operations are neither MCP tools nor in
 * an OpenAPI document.
 */
export function onConsole(operations: readonly Operation[]): Operation[] {
  return operations
    .filter((operation) => operation.surface === 'manage')
    .map((operation) => ({ ...operation, id: `console.${operation.id}`, surface: 'admin' as const, path: `/platform${operation.path}` }));
}
