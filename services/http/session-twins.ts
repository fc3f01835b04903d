import { isPlatformCapability, requiredCapabilities } from '../core/capabilities.ts';
import type { Operation } from '../core/operation.ts';

const routeOf = (operation: Operation) => `${operation.method} ${operation.path}`;

/**
 * The administration UI works on the cookie session, and the contract makes the Management API
 * "the same operations as the administration UI": so every Management operation is mounted a
 * second time on the admin surface, at its own path under `/api` (`GET /api/content` beside
 * `GET /api/manage/v1/content`). The twin is the same definition (id, handler, input, output,
 * capability and scope checks, audit action); only the way in differs: a session cookie with the
 * same-site `Origin` rule instead of a bearer key, not governed by the Management API switch and
 * not metered against `requestsPerMinute` (services/access/gate.ts).
 *
 * Not twinned:
 * - an operation whose route the admin surface already has: its own counterpart, whose answer
 *   differs for a browser (webhook secrets, settings' administrator view, invitations, audit,
 *   static export);
 * - platform operations (`platform:*`): the operator console has its own under `/api/platform`
 *   (platform/console-ops.ts), and managing operators stays on keys.
 * Twins are neither MCP tools nor in an OpenAPI document (admin-surface routes are internals, contract 1).
 */
export function sessionTwins(operations: readonly Operation[]): Operation[] {
  const adminRoutes = new Set(operations.filter((operation) => operation.surface === 'admin').map(routeOf));
  return operations
    .filter((operation) => operation.surface === 'manage')
    .filter((operation) => !adminRoutes.has(routeOf(operation)))
    .filter((operation) => !requiredCapabilities(operation.requires).some(isPlatformCapability))
    .map((operation) => ({ ...operation, surface: 'admin' as const }));
}
