import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

// No file-level circle is dependency-cruiser's `no-circular` rule; this test looks one level up:
// folders (each services/<folder>, the wiring files at services/ top level, activities/, workflows/)
// must form no circle either, so each floor stands on the ones below it (docs/ARCHITECTURE.md).
const root = resolve(import.meta.dirname, '../..');
const config = createRequire(import.meta.url)(resolve(root, '.dependency-cruiser.cjs'));

/**
 * What may still close a folder circle, each with its reason. An exception that no longer matches
 * (its circle is gone) fails the test, so it is removed as soon as its cause is.
 */
const EXCEPTIONS = {
  // Temporal's contract: a workflow names its activities by their type (proxyActivities<typeof acts>)
  // while activities start workflows through workflows/contracts. Type-only: erased at build time.
  typeOnly: [{ from: 'workflows', to: 'activities' }],
} as const;

interface Arrow {
  from: string;
  to: string;
  /** One import behind the arrow, for the failure message. */
  via: string;
  typeOnly: boolean;
}

const folderOf = (path: string): string | null => {
  const feature = /^services\/([^/]+)\//.exec(path);
  if (feature) return `services/${feature[1]}`;
  if (/^services\/[^/]+\.ts$/.test(path)) return 'services (wiring)';
  const top = /^(activities|workflows)\//.exec(path);
  return top ? top[1]! : null;
};

/** Folder → folder arrows of the repository's own code, from dependency-cruiser's module graph. */
function folderArrows(modules: ICruiseResult['modules']): Arrow[] {
  const arrows = new Map<string, Arrow>();
  for (const module of modules) {
    const from = folderOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from) continue;
      const typeOnly = dependency.dependencyTypes.includes('type-only');
      const key = `${from} → ${to}`;
      const known = arrows.get(key);
      if (!known) arrows.set(key, { from, to, via: `${module.source} → ${dependency.resolved}`, typeOnly });
      else if (known.typeOnly && !typeOnly) arrows.set(key, { from, to, via: `${module.source} → ${dependency.resolved}`, typeOnly });
    }
  }
  return [...arrows.values()];
}

/** The circles among folders: each strongly connected group of more than one folder (Tarjan), with its arrows. */
function folderCycles(arrows: readonly Arrow[]): string[][] {
  const next = new Map<string, Arrow[]>();
  for (const arrow of arrows) next.set(arrow.from, [...(next.get(arrow.from) ?? []), arrow]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const visit = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    for (const { to } of next.get(folder) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(folder, Math.min(low.get(folder)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(folder, Math.min(low.get(folder)!, index.get(to)!));
    }
    if (low.get(folder) !== index.get(folder)) return;
    const group: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      group.push(member);
      if (member === folder) break;
    }
    if (group.length > 1) groups.push(group);
  };
  for (const folder of new Set(arrows.flatMap((arrow) => [arrow.from, arrow.to]))) if (!index.has(folder)) visit(folder);
  return groups.map((group) =>
    arrows
      .filter((arrow) => group.includes(arrow.from) && group.includes(arrow.to))
      .map((arrow) => `${arrow.from} → ${arrow.to} (${arrow.via})`)
      .sort(),
  );
}

const excepted = (arrow: Arrow) => EXCEPTIONS.typeOnly.some((e) => e.from === arrow.from && e.to === arrow.to && arrow.typeOnly);

describe('folder-level import graph', () => {
  it('holds no circle between folders, but for the listed exceptions', async () => {
    const { tsConfig: _tsConfig, ...options } = config.options;
    // preserveSymlinks: a worktree's node_modules is a link to the main checkout's.
    const result = await cruise(['services', 'workflows', 'activities'], { ...options, baseDir: root, preserveSymlinks: true });
    const arrows = folderArrows((result.output as ICruiseResult).modules);

    expect(folderCycles(arrows.filter((arrow) => !excepted(arrow)))).toEqual([]);
    // Each exception still matches (else remove it), and no more widely than it says.
    const arrowOf = (from: string, to: string) => arrows.find((a) => a.from === from && a.to === to);
    for (const { from, to } of EXCEPTIONS.typeOnly) {
      expect(arrowOf(from, to), `${from} → ${to} is gone: remove its exception`).toBeDefined();
      expect(arrowOf(from, to)!.typeOnly, `${arrowOf(from, to)!.via} must be a type-only import`).toBe(true);
    }
  }, 60_000);

  it('negative control: a circle through three folders is reported, a type-only arrow too', () => {
    const arrow = (from: string, to: string, typeOnly = false): Arrow => ({ from, to, via: `${from}/a.ts → ${to}/b.ts`, typeOnly });
    const cycles = folderCycles([
      arrow('services/access', 'services/tenancy'),
      arrow('services/tenancy', 'services/platform', true),
      arrow('services/platform', 'services/access'),
      arrow('services/content', 'services/tenancy'),
    ]);
    expect(cycles).toEqual([
      [
        'services/access → services/tenancy (services/access/a.ts → services/tenancy/b.ts)',
        'services/platform → services/access (services/platform/a.ts → services/access/b.ts)',
        'services/tenancy → services/platform (services/tenancy/a.ts → services/platform/b.ts)',
      ],
    ]);
  });
});
