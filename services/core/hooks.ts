/**
 * Named filters plugins hook into (`openapi.document`, `mcp.tools`, `webhook.eventTypes`,
 * `webhook.payload`, ...). A filter receives the current value and returns the next one; filters
 * run in the order they were added. Process-wide: every workspace sees the same plugin code,
 * and a filter that must differ per site reads the site from `args` (the plugin host does this
 * for plugin filters, see services/plugins/host.ts).
 *
 * Actions are the side-effect twin of filters (`plugin.activated`, ...): every listener runs, in
 * order, and nothing is returned.
 */
export type Filter<T = unknown> = (value: T, args: Record<string, unknown>) => T | Promise<T>;
export type Action = (args: Record<string, unknown>) => void | Promise<void>;

export interface Hooks {
  addFilter<T>(name: string, filter: Filter<T>): () => void;
  applyFilters<T>(name: string, value: T, args?: Record<string, unknown>): Promise<T>;
  addAction(name: string, action: Action): () => void;
  /** Runs every listener even if one throws; the first error is rethrown after all have run. */
  doAction(name: string, args?: Record<string, unknown>): Promise<void>;
}

function createList<F>() {
  const lists = new Map<string, F[]>();
  return {
    add(name: string, item: F): () => void {
      lists.set(name, [...(lists.get(name) ?? []), item]);
      return () =>
        lists.set(
          name,
          (lists.get(name) ?? []).filter((f) => f !== item),
        );
    },
    get: (name: string): readonly F[] => lists.get(name) ?? [],
  };
}

export function createHooks(): Hooks {
  const filters = createList<Filter>();
  const actions = createList<Action>();
  return {
    addFilter(name, filter) {
      return filters.add(name, filter as Filter);
    },
    async applyFilters(name, value, args = {}) {
      let result = value;
      for (const filter of filters.get(name)) result = (await filter(result, args)) as typeof value;
      return result;
    },
    addAction(name, action) {
      return actions.add(name, action);
    },
    async doAction(name, args = {}) {
      let first: unknown;
      for (const action of actions.get(name)) {
        try {
          await action(args);
        } catch (error) {
          first ??= error;
        }
      }
      if (first !== undefined) throw first;
    },
  };
}
