import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValueNode } from 'graphql';

/** Most fields a query may touch, counting each list field as `limit` items of its selection. */
export const MAX_QUERY_COST = 5000;
/** Public list fields and the page size they use when no `limit` is given. */
const LIST_FIELDS: Record<string, number> = { content: 20, search: 20 };

/** Largest page a public list serves: a `limit` given as a variable is costed at this worst case. */
const MAX_PAGE = 100;

function argumentNumber(value: ValueNode | undefined): number | undefined {
  if (!value) return undefined;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) return MAX_PAGE;
  return undefined;
}

/**
 * A validation rule estimating what a query costs before it runs: one per selected field, list
 * fields multiplied by their page size, fragments expanded (each at most once per path, so a
 * fragment cycle cannot loop). Aliasing the same list many times adds up, which depth alone misses.
 * Static (no variable values), so mercurius can keep caching parsed and validated queries.
 */
export function costLimitRule(max = MAX_QUERY_COST) {
  return (context: ValidationContext): ASTVisitor => {
    const cost = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
      if (!set) return 0;
      let total = 0;
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const pageSize = LIST_FIELDS[selection.name.value];
          const inner = cost(selection.selectionSet, seen);
          if (pageSize !== undefined) {
            const limit = argumentNumber(selection.arguments?.find((a) => a.name.value === 'limit')?.value) ?? pageSize;
            total += 1 + Math.max(1, limit) * inner;
          } else {
            total += 1 + inner;
          }
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          total += cost(selection.selectionSet, seen);
        } else {
          const name = selection.name.value;
          if (seen.has(name)) continue;
          const fragment = context.getFragment(name);
          total += cost(fragment?.selectionSet, new Set([...seen, name]));
        }
      }
      return total;
    };
    return {
      OperationDefinition(node) {
        const total = cost(node.selectionSet, new Set());
        if (total > max) context.reportError(new GraphQLError(`Query too costly: ${total} > ${max}`, { nodes: [node] }));
      },
    };
  };
}
