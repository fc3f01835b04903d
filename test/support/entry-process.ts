import { spawn, type ChildProcess } from 'node:child_process';
import type { World } from './world.ts';

/** A process entry (services/gateway.ts, services/worker.ts, or their compiled dist/ form) with its output kept. */
export interface Running {
  child: ChildProcess;
  lines(): Record<string, unknown>[];
  line(message: string): Record<string, unknown>;
}

/**
 * `node <args>` with `env` added, resolved once every message of `ready` has been logged; the
 * children are recorded in `children` so the test stops them (`stopEntry`).
 */
export function startEntry(
  children: ChildProcess[],
  args: readonly string[],
  env: Record<string, string>,
  ready: string[],
  options: { cwd?: string; startMs?: number } = {},
): Promise<Running> {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const entry = args.at(-1);
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const running: Running = {
    child,
    lines,
    line: (message) => {
      const found = lines().find((l) => l.msg === message);
      if (!found) throw new Error(`no "${message}" line in:\n${out.slice(-3000)}`);
      return found;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${out.slice(-3000)}`)), options.startMs ?? 150_000);
    child.stdout!.on('data', () => {
      if (ready.every((message) => lines().some((l) => l.msg === message))) {
        clearTimeout(timer);
        resolve(running);
      }
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited ${code}:\n${out.slice(-3000)}`)));
  });
}

/** SIGTERM, resolved once the process is gone (at once if it already is). */
export const stopEntry = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')),
  );

/** What an entry process needs to run on a test world's engines, databases, task queue and administrator. */
export const worldEnv = ({ config, admin }: Pick<World, 'config' | 'admin'>): Record<string, string> => ({
  MONGODB_URI: config.MONGODB_URI,
  TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
  DB_PREFIX: config.DB_PREFIX,
  TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
  SECRET_KEY: config.SECRET_KEY,
  ADMIN_EMAIL: admin.email,
  ADMIN_PASSWORD: admin.password,
});
