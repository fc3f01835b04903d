import type { Document, Filter } from 'mongodb';
import type { Principal } from './principal.ts';
import { UnauthorizedError } from './errors.ts';

/** Which document fields hold what a key's scope restricts. Omit a field a collection lacks. */
export interface ScopeFields {
  type?: string;
  locale?: string;
  owner?: string;
}

/**
 * What an operation declares about key scope (contract 7): the fields of the scoped documents it
 * reads or writes (several sets when it reads several collections, e.g. analytics), or `'none'`
 * when it needs a scoped capability but touches no scoped document (content types, taxonomies).
 * test/foundation/declared-scope.test.ts refuses an operation on scoped data that declares nothing.
 */
export type ScopeDeclaration = ScopeFields | readonly ScopeFields[] | 'none';

/**
 * The declared scope, applied for the caller (`ctx.scope`). Reads merge `filter` into their
 * query (access-as-query: lists are narrowed, never denied whole); writes and single-item reads
 * `check` the document as it is and as it will be. Users and the system principal are unscoped.
 * `fields` picks one of several declared sets; with one set it may be left out.
 */
export interface ScopeGuard {
  filter<T>(base: Filter<T>, fields?: ScopeFields): Filter<T>;
  check(doc: object, fields?: ScopeFields): void;
  /** Whether `check` would pass: for a caller that falls back to another read rather than refuse. */
  allows(doc: object, fields?: ScopeFields): boolean;
}

/** The capabilities whose data a key's scope narrows: operations requiring them must declare scope. */
export const SCOPED_CAPABILITY_PREFIXES = ['content:', 'media:', 'comments:', 'analytics:'] as const;

function scopeQuery(principal: Principal, fields: ScopeFields): Filter<Document> {
  if (principal.kind !== 'key') return {};
  const { scope } = principal;
  const filter: Filter<Document> = {};
  if (fields.type && scope.types?.length) filter[fields.type] = { $in: scope.types };
  if (fields.locale && scope.locales?.length) filter[fields.locale] = { $in: scope.locales };
  if (fields.owner && scope.ownOnly) filter[fields.owner] = principal.userId;
  return filter;
}

/**
 * Whether the document is inside the key's scope. Contract 7: an out-of-scope key gets the same
 * generic 401 as an unknown, revoked or expired one (`check`), so the answer does not reveal that
 * the item exists outside the scope.
 */
function inside(principal: Principal, fields: ScopeFields, doc: Record<string, unknown>): boolean {
  if (principal.kind !== 'key') return true;
  const { scope } = principal;
  const outside =
    (fields.type && scope.types?.length && !scope.types.includes(String(doc[fields.type]))) ||
    (fields.locale && scope.locales?.length && !scope.locales.includes(String(doc[fields.locale]))) ||
    (fields.owner && scope.ownOnly && doc[fields.owner] !== principal.userId);
  return !outside;
}

/** A programming error, not a caller's: the operation uses scope it did not declare (a 500). */
export class UndeclaredScopeError extends Error {
  constructor(what: string) {
    super(`${what} uses key scope but does not declare it (scope: on its definition)`);
    this.name = 'UndeclaredScopeError';
  }
}

export function scopeGuard(principal: Principal, declaration: ScopeDeclaration | undefined, what: string): ScopeGuard {
  const sets: readonly ScopeFields[] =
    declaration === undefined || declaration === 'none' ? [] : Array.isArray(declaration) ? declaration : [declaration as ScopeFields];
  const pick = (fields?: ScopeFields): ScopeFields => {
    const chosen = fields ? sets.find((set) => set === fields) : sets.length === 1 ? sets[0] : undefined;
    if (!chosen) throw new UndeclaredScopeError(what);
    return chosen;
  };
  return {
    filter(base, fields) {
      const query = scopeQuery(principal, pick(fields));
      return (Object.keys(query).length === 0 ? base : { $and: [base, query] }) as typeof base;
    },
    check(doc, fields) {
      if (!inside(principal, pick(fields), doc as Record<string, unknown>)) throw new UnauthorizedError();
    },
    allows: (doc, fields) => inside(principal, pick(fields), doc as Record<string, unknown>),
  };
}

/** Outside any operation (workflows, activities, helpers run by the system): no declaration to apply. */
export const contextScope = (principal: Principal): ScopeGuard =>
  principal.kind === 'key' ? scopeGuard(principal, undefined, 'code outside an operation') : unscoped;

const unscoped: ScopeGuard = { filter: (base) => base, check: () => undefined, allows: () => true };

/**
 * The operations that need a capability over scoped data (content, media, comments, analytics)
 * yet declare no `scope`: a new list that forgot it would be silently unscoped for keys.
 */
export function undeclaredScopeOperations(operations: ReadonlyArray<{ id: string; requires: string | readonly string[]; scope?: ScopeDeclaration }>): string[] {
  return operations
    .filter((op) => op.scope === undefined)
    .filter((op) => (Array.isArray(op.requires) ? op.requires : [op.requires]).some((c: string) => SCOPED_CAPABILITY_PREFIXES.some((p) => c.startsWith(p))))
    .map((op) => op.id);
}
