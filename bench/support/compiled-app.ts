import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** An app folder laid out as the image lays it out (docs/production.md): `dist/` and `node_modules`. */
export interface CompiledApp {
  readonly dir: string;
  /** Removes the folder, unless it was given (`reuse`). */
  remove(): void;
}

/**
 * The production build (`npm run build`) in a temporary app folder beside a link to the project's
 * node_modules, so a benchmark measures what the image runs (`node dist/services/…`, no tsx and no
 * loader hooks) rather than the sources under tsx. `reuse`: an app folder built before, or to build
 * into and keep when it is not there yet.
 */
export function buildCompiledApp(reuse?: string): CompiledApp {
  if (reuse && existsSync(join(reuse, 'dist'))) return { dir: reuse, remove: () => undefined };
  const dir = reuse ?? mkdtempSync(join(tmpdir(), 'cwb-bench-build-'));
  if (reuse) mkdirSync(reuse, { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--out-dir', join(dir, 'dist')], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (build.status !== 0) throw new Error(`npm run build failed: ${build.stdout}${build.stderr}`);
  return { dir, remove: () => (reuse ? undefined : rmSync(dir, { recursive: true, force: true })) };
}
