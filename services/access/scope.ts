import type { Filter, Document } from 'mongodb';
import type { Principal } from '../core/principal.ts';
import { UnauthorizedError } from '../core/errors.ts';

/** Which document fields hold what a key's scope restricts. Omit a field a collection lacks. */
export interface ScopeFields {
  type?: string;
  locale?: string;
  owner?: string;
}

/**
 * A key's scope as a MongoDB filter, merged into every read (Payload-style access-as-query):
 * lists are narrowed, never denied whole. Users and the system principal are unscoped.
 */
export function scopeFilter(principal: Principal, fields: ScopeFields): Filter<Document> {
  if (principal.kind !== 'key') return {};
  const { scope } = principal;
  const filter: Filter<Document> = {};
  if (fields.type && scope.types?.length) filter[fields.type] = { $in: scope.types };
  if (fields.locale && scope.locales?.length) filter[fields.locale] = { $in: scope.locales };
  if (fields.owner && scope.ownOnly) filter[fields.owner] = principal.userId;
  return filter;
}

/**
 * For writes, and for reads of one item: the document (as it is, and as it will be) must sit inside
 * the key's scope. Contract 7: an out-of-scope key gets the same generic 401 as an unknown, revoked
 * or expired one, so the answer does not reveal that the item exists outside the scope.
 */
export function assertWithinScope(principal: Principal, fields: ScopeFields, doc: Record<string, unknown>): void {
  if (principal.kind !== 'key') return;
  const { scope } = principal;
  const outside =
    (fields.type && scope.types?.length && !scope.types.includes(String(doc[fields.type]))) ||
    (fields.locale && scope.locales?.length && !scope.locales.includes(String(doc[fields.locale]))) ||
    (fields.owner && scope.ownOnly && doc[fields.owner] !== principal.userId);
  if (outside) throw new UnauthorizedError();
}
