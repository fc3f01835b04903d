import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

// The same rules `npm run lint` applies (.dependency-cruiser.cjs), run on the real tree and on a
// fixture tree that breaks each rule once: the negative control proving the rules can fail.
const root = resolve(import.meta.dirname, '../..');
const config = createRequire(import.meta.url)(resolve(root, '.dependency-cruiser.cjs'));

async function violations(baseDir: string, paths: string[]) {
  const { tsConfig: _tsConfig, ...options } = config.options;
  // preserveSymlinks: in a worktree node_modules links to the main checkout's, whose resolved paths would break the rules.
  const result = await cruise(paths, { ...options, baseDir, preserveSymlinks: true, ruleSet: { forbidden: config.forbidden }, validate: true });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

describe('import rules (dependency-cruiser)', () => {
  it('the code holds no circle, no upward import and no side door', async () => {
    expect(await violations(root, ['services', 'workflows', 'activities'])).toEqual([]);
  }, 60_000);

  it('negative control: each rule reports its fixture', async () => {
    const found = await violations(resolve(import.meta.dirname, 'import-rules-fixture'), ['services', 'workflows']);
    expect(found).toEqual([
      'core-is-the-ground-floor: services/core/upward.ts → services/content/thing.ts',
      'features-never-import-http: services/content/thing.ts → services/http/route.ts',
      'features-never-import-the-platform: services/media/reach.ts → services/platform/ops.ts',
      'no-circular: services/content/ping.ts → services/content/pong.ts',
      'tenancy-stands-on-core: services/tenancy/ground.ts → services/content/thing.ts',
      'worker-serves-no-http: services/worker.ts → services/http/route.ts',
      'workflows-are-deterministic: workflows/wf.ts → crypto',
      'workflows-are-deterministic: workflows/wf.ts → services/core/pure.ts',
    ]);
  }, 60_000);
});
