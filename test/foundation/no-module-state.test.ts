import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Process state is a typed member of `Services`, built once in services/runtime.ts, never a
 * module-level map (a registry keyed by `Services`, by database or by operation hides state that
 * depends on call order and that tests would have to monkeypatch). Constant sets written out in
 * full at their declaration are fine; an empty map or set waiting to be filled, or a `let`, is not.
 */
const MODULE_STATE = /^(?:export )?(?:let \w+|(?:const|var) \w+(?:: [^=]+)? = new (?:WeakMap|WeakSet|Map|Set)(?:<[^>]*>)?\(\s*\))/m;

/**
 * The one exception: a decoy password hash computed on first use (scrypt is too slow to run at
 * import). It is a constant once made, the same whoever asks first, so nothing depends on order.
 */
const ALLOWED = new Set(['services/access/passwords.ts: let decoy']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

export function moduleState(files: Record<string, string>): string[] {
  return Object.entries(files).flatMap(([file, text]) => {
    const found = MODULE_STATE.exec(text);
    return found ? [`${file}: ${found[0]}`] : [];
  });
}

describe('no module-level state', () => {
  it('services, activities and workflows hold no module-level map, set or let', () => {
    const files = Object.fromEntries(['services', 'activities', 'workflows'].flatMap(sources).map((file) => [file, readFileSync(file, 'utf8')]));
    expect(Object.keys(files).length).toBeGreaterThan(200);
    expect(moduleState(files).filter((found) => !ALLOWED.has(found))).toEqual([]);
  });

  it('negative control: a registry keyed by Services, an empty map and a let are each reported', () => {
    expect(
      moduleState({
        'a.ts': 'const registry = new WeakMap<Services, Settings>();\n',
        'b.ts': 'export const owners = new Map<Operation, string>();\n',
        'c.ts': 'let counter = 0;\n',
        'd.ts': "const SAFE = new Set(['GET', 'HEAD']);\nfunction f() {\n  const local = new Map();\n}\n",
      }),
    ).toEqual(['a.ts: const registry = new WeakMap<Services, Settings>()', 'b.ts: export const owners = new Map<Operation, string>()', 'c.ts: let counter']);
  });
});
