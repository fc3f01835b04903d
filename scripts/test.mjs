// `npm test`: the same setup as `npm start`, then type-check, lint and the whole suite against
// the real engines.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, ensureDependencies, resolveEngines } from './setup.mjs';
import { stopEngines } from './engines.mjs';

const dataDir = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
ensureDependencies();
const engines = await resolveEngines(dataDir);
const env = { ...process.env, ...engines, DATA_DIR: dataDir };
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);

const steps = [
  ['type-check', bin('tsc'), ['--noEmit']],
  ['format', bin('prettier'), ['--check', '--log-level', 'warn', '.']],
  ['lint', bin('eslint'), ['.']],
  ['import rules', bin('depcruise'), ['--config', '.dependency-cruiser.cjs', 'services', 'workflows', 'activities']],
  ['tests', bin('vitest'), ['run', ...process.argv.slice(2)]],
];
let failed = false;
for (const [name, command, args] of steps) {
  console.log(`\n== ${name}`);
  const result = spawnSync(command, args, { cwd: ROOT, env, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`${name} failed (exit ${result.status ?? result.signal})`);
    failed = true;
    break;
  }
}
// CI machines are thrown away; locally the engines stay up so the next run starts in seconds.
if (process.env.CI) await stopEngines({ dataDir, log: () => undefined }).catch(() => undefined);
process.exit(failed ? 1 : 0);
