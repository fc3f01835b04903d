import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../services/core/config.ts';
import { WORKER_NODE_FLAGS } from '../../scripts/worker-node-flags.mjs';

const childScript = fileURLToPath(new URL('./worker-child.ts', import.meta.url));

/**
 * Starts a worker (services/worker-factory.ts) in its own OS process on the world's databases and
 * task queue, resolving once it polls; `env` adds settings (e.g. `WEBHOOK_TEST_OPTIONS`).
 */
export async function spawnWorkerProcess(config: Config, env: Record<string, string> = {}, startMs = 90_000): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, '--import', 'tsx', childScript], {
    env: {
      ...process.env,
      MONGODB_URI: config.MONGODB_URI,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      DB_PREFIX: config.DB_PREFIX,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      SECRET_KEY: config.SECRET_KEY,
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${stderr.slice(-2000)}`)), startMs);
    child.stdout?.on('data', (chunk) => {
      if (String(chunk).includes('worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}): ${stderr.slice(-2000)}`));
    });
  });
  return child;
}

/** SIGKILL, resolved once the process is gone (at once if it already is). */
export function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
