// Shared first steps of `npm start` and `npm test`. Plain Node, no npm dependencies: it runs
// before `npm install` has.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureEngines } from './engines.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * `npm install` (from the lockfile) when node_modules is missing or older than the lockfile;
 * otherwise nothing. (`npm ci` works too since the lockfile lists every platform's optional
 * packages; `npm install` keeps an existing node_modules instead of deleting it first.)
 */
export function ensureDependencies(log = console.log) {
  const marker = path.join(ROOT, 'node_modules', '.package-lock.json');
  const lock = path.join(ROOT, 'package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  log('Installing npm dependencies…');
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm install failed with exit code ${result.status}`);
}

/** A stable SECRET_KEY for local runs, kept in the data folder (mode 0600) unless the env sets one. */
export function ensureSecretKey(dataDir) {
  if (process.env.SECRET_KEY) return process.env.SECRET_KEY;
  const file = path.join(dataDir, 'secret.key');
  fs.mkdirSync(dataDir, { recursive: true });
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return fs.readFileSync(file, 'utf8').trim();
}

/** Engines from the environment when given, else the local ones (installed and started as needed). */
export async function resolveEngines(dataDir, log = console.log) {
  if (process.env.MONGODB_URI && process.env.TEMPORAL_ADDRESS) {
    return { MONGODB_URI: process.env.MONGODB_URI, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS };
  }
  const engines = await ensureEngines({
    dataDir,
    mongoPort: Number(process.env.MONGO_PORT ?? 27117),
    temporalPort: Number(process.env.TEMPORAL_PORT ?? 7233),
    log,
  });
  return {
    MONGODB_URI: process.env.MONGODB_URI ?? engines.mongoUri,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? engines.temporalAddress,
  };
}
