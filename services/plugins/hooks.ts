/**
 * Named filters plugins hook into (`openapi.document`, `mcp.tools`, `webhook.eventTypes`,
 * `webhook.payload`, ...). A filter receives the current value and returns the next one; filters
 * run in the order they were added. Process-wide: every workspace sees the same plugin code,
 * and a filter that must differ per site reads the site from `args`.
 */
export type Filter<T = unknown> = (value: T, args: Record<string, unknown>) => T | Promise<T>;

export interface Hooks {
  addFilter<T>(name: string, filter: Filter<T>): () => void;
  applyFilters<T>(name: string, value: T, args?: Record<string, unknown>): Promise<T>;
}

export function createHooks(): Hooks {
  const filters = new Map<string, Filter[]>();
  return {
    addFilter(name, filter) {
      const list = filters.get(name) ?? [];
      list.push(filter as Filter);
      filters.set(name, list);
      return () => {
        const current = filters.get(name) ?? [];
        filters.set(name, current.filter((f) => f !== filter));
      };
    },
    async applyFilters(name, value, args = {}) {
      let result = value;
      for (const filter of filters.get(name) ?? []) result = (await filter(result, args)) as typeof value;
      return result;
    },
  };
}
