// `npm start`: install what is missing, start the local engines unless MONGODB_URI /
// TEMPORAL_ADDRESS are set, then run the gateway and the Temporal worker together.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, ensureDependencies, ensureSecretKey, resolveEngines } from './setup.mjs';
import { WORKER_ENV, WORKER_NODE_FLAGS } from './worker-node-flags.mjs';

const dataDir = path.resolve(ROOT, process.env.DATA_DIR ?? '.data');
ensureDependencies();
const engines = await resolveEngines(dataDir);
const env = { ...process.env, ...engines, DATA_DIR: dataDir, SECRET_KEY: ensureSecretKey(dataDir) };
const port = env.PORT ?? '3000';
const host = env.HOST ?? '127.0.0.1';

const children = [
  ['services/gateway.ts', [], env],
  ['services/worker.ts', WORKER_NODE_FLAGS, { ...env, ...WORKER_ENV }],
].map(([entry, flags, entryEnv]) => spawn(process.execPath, [...flags, '--import', 'tsx', entry], { cwd: ROOT, env: entryEnv, stdio: 'inherit' }));

console.log(`\nService starting at http://${host}:${port}`);
console.log(`  Public Content API  http://${host}:${port}/api/v1/content`);
console.log(`  Management API      http://${host}:${port}/api/manage/v1 (Bearer svk_… key; switch it on first)`);
console.log(`  Sign in             POST http://${host}:${port}/api/auth/login as the administrator named below on first`);
console.log(`                      start, password in ${path.join(dataDir, 'initial-admin-password')} (or ADMIN_EMAIL / ADMIN_PASSWORD if you set them).\n`);

let stopping = false;
const stop = (signal) => {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
for (const child of children) {
  child.on('exit', (code) => {
    // One half without the other is not a working service: stop both.
    if (!stopping) {
      console.error(`${child.spawnargs.at(-1)} exited with code ${code}; stopping.`);
      stop('SIGTERM');
    }
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(code ?? 0);
  });
}
