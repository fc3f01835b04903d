// `npm run build`: the production build (docs/production.md). Compiles services/, workflows/ and
// activities/ to JavaScript (tsconfig.build.json), copies the files read at run time beside their
// modules, writes the package facts the compiled code reads, and bundles the workflows once so
// the worker does not run webpack at start. `--out-dir <dir>` builds elsewhere (the suite does).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Self-contained: the image's build stage copies this file alone of scripts/ (Dockerfile).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const SOURCE_DIRS = ['services', 'workflows', 'activities'];

const flag = process.argv.indexOf('--out-dir');
if (flag !== -1 && !process.argv[flag + 1]) {
  console.error('--out-dir needs a folder');
  process.exit(1);
}
const outDir = path.resolve(flag === -1 ? path.join(ROOT, 'dist') : process.argv[flag + 1]);

fs.rmSync(outDir, { recursive: true, force: true });
const tsc = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', outDir], {
  cwd: ROOT,
  stdio: 'inherit',
});
if (tsc.status !== 0) {
  console.error(`tsc failed (exit ${tsc.status ?? tsc.signal})`);
  process.exit(1);
}

// Files the code reads relative to its own module (the admin UI's pages, scripts, styles): every
// file of the source folders that is neither compiled nor a folder's README.
let assets = 0;
for (const dir of SOURCE_DIRS) {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.ts') || entry.name === 'README.md') continue;
    const from = path.join(entry.parentPath, entry.name);
    const to = path.join(outDir, path.relative(ROOT, from));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    assets++;
  }
}

// services/core/version.ts reads the version from `../../package.json`, which is `dist/package.json`
// once compiled; `type: module` makes the compiled files ES modules wherever dist/ is put.
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module' }, null, 2)}\n`);

// The workflow bundle, from the compiled workflows (what the image runs), with the interceptors
// every bundle carries.
const { bundleWorkflowCode, DefaultLogger } = await import('@temporalio/worker');
const bundle = await import(pathToFileURL(path.join(outDir, 'services', 'workflow-bundle.js')).href);
const { code } = await bundleWorkflowCode({
  workflowsPath: bundle.workflowsPath,
  workflowInterceptorModules: bundle.workflowInterceptorModules,
  logger: new DefaultLogger('WARN'),
});
fs.writeFileSync(bundle.builtWorkflowBundlePath, code);

console.log(`built ${outDir}: ${assets} asset files, workflow bundle ${Math.round(code.length / 1024)} KiB`);
