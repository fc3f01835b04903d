// The API fuzzer of the test suite: schemathesis from PyPI, in its own virtual environment under
// the git-ignored `.engines/`. Plain Node, no npm dependencies. Installed on first use (about 30 s),
// then reused; a version bump here reinstalls it.
//
//   import { ensureSchemathesis } from './scripts/fuzzer.mjs';
//   node scripts/fuzzer.mjs install
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SCHEMATHESIS_VERSION = '4.32.5';

function run(cmd, args) {
  const result = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw new Error(`failed to run ${cmd}: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited with ${result.status}\n${`${result.stdout}${result.stderr}`.trim().split('\n').slice(-30).join('\n')}`);
  return result.stdout;
}

function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Path of the `schemathesis` executable, installing the pinned version when it is missing. */
export function ensureSchemathesis(log = console.log) {
  const want = `schemathesis==${SCHEMATHESIS_VERSION}`;
  const target = path.join(ROOT, '.engines', `schemathesis-${SCHEMATHESIS_VERSION}`);
  const bin = path.join(target, 'bin', 'schemathesis');
  const stamp = path.join(target, '.installed');
  // The stamp names the folder too: a venv copied or moved from elsewhere (a worktree) keeps
  // scripts whose first line names the old folder's interpreter, and fails to start.
  const installed = `${want} ${target}`;
  if (fs.existsSync(bin) && readText(stamp) === installed) return bin;
  const python = ['python3', 'python'].find((name) => spawnSync(name, ['--version']).status === 0);
  if (!python) throw new Error('python3 (with venv and pip) is required for the API fuzzer (PyPI schemathesis)');
  log(`[fuzzer] installing ${want} into ${target} ...`);
  // A venv cannot be moved (its scripts name their interpreter by path), so it is built in place
  // and the stamp, written last, says it is complete; a half-built one is wiped and rebuilt.
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  run(python, ['-m', 'venv', target]);
  run(path.join(target, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', want]);
  fs.writeFileSync(stamp, installed);
  return bin;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] !== 'install') {
    console.error('usage: node scripts/fuzzer.mjs install');
    process.exit(2);
  }
  console.log(ensureSchemathesis());
}
