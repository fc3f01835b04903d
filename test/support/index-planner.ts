/**
 * MongoDB's planner rules, small enough to read: does a declared index serve a query (filter +
 * sort)? The index-coverage test matches every query the service sends against the indexes its
 * features declare with these rules; the local engine cannot tell (it ignores non-unique indexes
 * and has no `explain`).
 *
 * A query is split into equality predicates (a value, `$eq`, `$in`), range predicates (`$gt`,
 * `$lt`, `$ne`, `$exists`, an anchored `$regex`, ...) and residual ones no index bound can use
 * (an unanchored `$regex`, `$expr`, `$where`, `$not`, `$nor`, `$elemMatch` on a document). An
 * index serves it when, walking its keys in order:
 *   1. the leading keys are equality fields (any order) and every equality field is among them;
 *   2. then come the sort fields in order, all in the sort's directions or all reversed (a sort
 *      field bound by equality may be skipped: it is constant);
 *   3. then at most one range field (further range predicates are residual filters on what the
 *      bounds already narrowed).
 * A query with no predicate and no sort reads the whole collection: never served. Point lookups
 * are served whatever else they filter on: `_id` by equality, or every key of a unique index by
 * equality. A `$or` is served when each branch (with the predicates beside it) is.
 */

export type IndexKeys = Readonly<Record<string, 1 | -1 | string | number>>;
export interface DeclaredIndex {
  keys: IndexKeys;
  unique?: boolean;
}
export type Sort = ReadonlyArray<readonly [string, 1 | -1]>;

export interface QueryShape {
  equality: string[];
  range: string[];
  residual: string[];
  /** Branches of a top-level `$or` (each its own shape, the predicates beside the `$or` merged in). */
  or?: QueryShape[];
}

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte', '$ne', '$exists', '$nin', '$type', '$size', '$all', '$mod']);

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

/** A `$regex` that only matches from the start of the string (`^abc`, no `i` flag) narrows index bounds. */
function anchoredRegex(condition: Record<string, unknown>): boolean {
  const regex = condition.$regex;
  const source = regex instanceof RegExp ? regex.source : typeof regex === 'string' ? regex : '';
  const flags = regex instanceof RegExp ? regex.flags : String(condition.$options ?? '');
  return source.startsWith('^') && !flags.includes('i');
}

function classify(value: unknown): 'equality' | 'range' | 'residual' {
  if (value instanceof RegExp) return anchoredRegex({ $regex: value }) ? 'range' : 'residual';
  if (!isOperatorObject(value)) return 'equality';
  const operators = Object.keys(value);
  if (operators.every((op) => op === '$eq' || op === '$in')) return 'equality';
  if (operators.includes('$regex')) return anchoredRegex(value) ? 'range' : 'residual';
  if (operators.every((op) => RANGE_OPERATORS.has(op) || op === '$eq' || op === '$in')) return 'range';
  return 'residual';
}

/** The predicates of a filter, by kind. */
export function queryShape(filter: Readonly<Record<string, unknown>> = {}): QueryShape {
  const shape: QueryShape = { equality: [], range: [], residual: [] };
  const ors: Array<Array<Record<string, unknown>>> = [];
  const visit = (part: Readonly<Record<string, unknown>>) => {
    for (const [field, value] of Object.entries(part)) {
      if (field === '$and') for (const inner of value as Array<Record<string, unknown>>) visit(inner);
      else if (field === '$or') ors.push(value as Array<Record<string, unknown>>);
      else if (field.startsWith('$')) shape.residual.push(field);
      else shape[classify(value)].push(field);
    }
  };
  visit(filter);
  // More than one `$or`: their product would be needed; the first one is split, the others are residual.
  const [first, ...rest] = ors;
  for (const _ of rest) shape.residual.push('$or');
  if (first) {
    shape.or = first.map((branch) => {
      const inner = queryShape(branch);
      return {
        equality: [...new Set([...shape.equality, ...inner.equality])],
        range: [...new Set([...shape.range, ...inner.range])],
        residual: [...shape.residual, ...inner.residual],
        ...(inner.or ? { or: inner.or } : {}),
      };
    });
  }
  return shape;
}

const direction = (value: IndexKeys[string]) => (value === -1 ? -1 : 1);

/**
 * How many of the index's keys this shape uses (equality, then sort, then one range), or 0 when the
 * index does not serve it (no `$or`) with this sort, by the rules above.
 */
export function indexUse(index: DeclaredIndex, shape: QueryShape, sort: Sort = []): number {
  const keys = Object.entries(index.keys);
  const equality = new Set(shape.equality);
  let at = 0;
  const bound = new Set<string>();
  while (at < keys.length && equality.has(keys[at][0])) bound.add(keys[at++][0]);
  if (bound.size !== equality.size) return 0;
  const pendingSort = sort.filter(([field]) => !bound.has(field));
  let sense: 1 | -1 | 0 = 0;
  for (const [field, wanted] of pendingSort) {
    if (at >= keys.length || keys[at][0] !== field) return 0;
    const relation = direction(keys[at][1]) === wanted ? 1 : -1;
    if (sense !== 0 && relation !== sense) return 0;
    sense = relation;
    at += 1;
  }
  if (at < keys.length && shape.range.includes(keys[at][0])) at += 1;
  // Something must narrow or order the scan: a bare collection scan is not served by an index.
  return at;
}

export const indexServes = (index: DeclaredIndex, shape: QueryShape, sort: Sort = []): boolean => indexUse(index, shape, sort) > 0;

/**
 * The verdict on one query against the indexes of its collection (`_id` is always there). A query
 * with no predicate and no sort but a `limit` reads that many documents (GridFS's "any file yet?").
 */
export function served(filter: Readonly<Record<string, unknown>> | undefined, sort: Sort, indexes: readonly DeclaredIndex[], limit?: number): boolean {
  return servingIndexes(filter, sort, indexes, limit) !== null;
}

const ID_INDEX: DeclaredIndex = { keys: { _id: 1 }, unique: true };

/**
 * The indexes that serve the query (one per `$or` branch), `_id` included; `[]` when it reads
 * only a bounded handful without any; null when nothing serves it.
 */
export function servingIndexes(
  filter: Readonly<Record<string, unknown>> | undefined,
  sort: Sort,
  indexes: readonly DeclaredIndex[],
  limit?: number,
): DeclaredIndex[] | null {
  if (Object.keys(filter ?? {}).length === 0 && sort.length === 0 && limit !== undefined && limit > 0 && limit <= 1) return [];
  const all = [ID_INDEX, ...indexes];
  const pick = (shape: QueryShape): DeclaredIndex[] | null => {
    if (shape.or) {
      const branches = shape.or.map(pick);
      return branches.every((b) => b !== null) ? branches.flat() : null;
    }
    if (shape.equality.includes('_id')) return [ID_INDEX];
    const unique = all.find((index) => index.unique && Object.keys(index.keys).every((key) => shape.equality.includes(key)));
    if (unique) return [unique];
    // The planner picks the index that bounds the most: the one whose keys this query uses most.
    const [best] = all.map((index) => ({ index, use: indexUse(index, shape, sort) })).sort((a, b) => b.use - a.use);
    return best && best.use > 0 ? [best.index] : null;
  };
  return pick(queryShape(filter ?? {}));
}

/** A sort as the driver sends it (a document, or the `Map` the driver builds from one), in order. */
export function sortOf(sort: unknown): Sort {
  if (!sort || typeof sort !== 'object') return [];
  const entries = sort instanceof Map ? [...(sort as Map<string, unknown>)] : Object.entries(sort as Record<string, unknown>);
  return entries.map(([field, value]) => [field, value === -1 || value === 'desc' || value === 'descending' ? -1 : 1] as const);
}
