import type { Services } from '../core/context.ts';
import { checkEngines } from './health.ts';

/**
 * Whether this process can serve: MongoDB answers a ping and Temporal its system info, each
 * within the bound of /health's checks. `missing` names the engines that did not, by the names
 * of /health's checks (`database`, `temporal`). Whether a worker polls is not part of it: a
 * gateway without a worker still serves every read and write (deliveries and exports wait), and
 * taking every gateway out of service because the worker is down would make it an outage.
 */
export async function engineReadiness(services: Services): Promise<{ ready: boolean; missing: string[] }> {
  const checks = await checkEngines(services);
  const missing = Object.entries(checks)
    .filter(([, check]) => check.status !== 'ok')
    .map(([name]) => name);
  return { ready: missing.length === 0, missing };
}
