import type { OperationContext, Services } from '../core/context.ts';
import type { Operation, Surface } from '../core/operation.ts';
import type { SiteScope } from '../platform/tenancy.ts';
import { anonymous, type Principal } from './principal.ts';
import { UnauthorizedError } from '../core/errors.ts';

/** What the surfaces know about a request before it is authenticated. */
export interface Credentials {
  authorization?: string;
  cookies: Record<string, string | undefined>;
  ip: string;
  origin?: string;
  method: string;
}

/**
 * The access feature's single entry point for the HTTP and MCP surfaces: who is calling, and may
 * this call go ahead now (switches, rate limits). Returns headers to add to the response.
 */
export interface AccessGate {
  authenticate(surface: Surface, credentials: Credentials, scope: SiteScope): Promise<Principal>;
  admit(ctx: OperationContext, operation: Operation): Promise<Record<string, string>>;
}

/** Until the access feature supplies a gate, nobody but anonymous public readers gets in. */
export function createDenyAllGate(_services: Services): AccessGate {
  return {
    async authenticate(surface) {
      if (surface === 'public') return anonymous;
      throw new UnauthorizedError();
    },
    async admit() {
      return {};
    },
  };
}
