import type { Capability } from './capabilities.ts';

/** A key's scope (contract 5.3): every field optional; absent means unrestricted. */
export interface KeyScope {
  types?: string[];
  locales?: string[];
  /** Only entries (and media) the key's owner authored. */
  ownOnly?: boolean;
}

export type Principal =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      userId: string;
      sessionId: string;
      capabilities: ReadonlySet<Capability>;
      isPlatformOperator: boolean;
      /** The account must switch two-factor sign-in on first: until then it holds no capability (docs/accounts.md). */
      twoFactorPending?: boolean;
    }
  | {
      kind: 'key';
      keyId: string;
      userId: string;
      /** Already intersected with the owner's current capabilities (live re-check). */
      capabilities: ReadonlySet<Capability>;
      scope: KeyScope;
      isPlatformOperator: boolean;
    }
  | {
      /** Workflows, activities and bootstrap. The only bypass of access checks; grep for it. */
      kind: 'system';
      reason: string;
    };

export const anonymous: Principal = { kind: 'anonymous' };

export function systemPrincipal(reason: string): Principal {
  return { kind: 'system', reason };
}

export function hasCapability(principal: Principal, capability: Capability): boolean {
  if (principal.kind === 'system') return true;
  if (principal.kind === 'anonymous') return false;
  return principal.capabilities.has(capability);
}

/** Id recorded as author/actor on writes; system writes have none. */
export function actorUserId(principal: Principal): string | null {
  return principal.kind === 'user' || principal.kind === 'key' ? principal.userId : null;
}

export function actorKeyId(principal: Principal): string | null {
  return principal.kind === 'key' ? principal.keyId : null;
}
