// `npm run bench [name…]`: every benchmark in bench/ (or the named ones), one after another, on the
// same engines as `npm start`. Each prints ratios against a baseline measured in the same run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, ensureDependencies, resolveEngines } from './setup.mjs';

const dataDir = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
ensureDependencies();
const env = { ...process.env, ...(await resolveEngines(dataDir)), DATA_DIR: dataDir };
const wanted = process.argv.slice(2);
const benches = fs
  .readdirSync(path.join(ROOT, 'bench'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name));

let failed = false;
for (const name of benches) {
  console.log(`\n== bench/${name}.ts`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}.ts`], { cwd: ROOT, env, stdio: 'inherit' });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
