import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface LoadOptions {
  connections?: number;
  durationSec?: number;
  headers?: Record<string, string>;
}

/**
 * Loopback load with a fixed number of connections and a fixed duration. The load generator runs
 * in a worker thread so that it does not steal the event loop of the server under test.
 */
export async function measure(name: string, url: string, options: LoadOptions = {}): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 20,
    duration: options.durationSec ?? 5,
    headers: options.headers,
    workers: 1,
  });
  return {
    name,
    requestsPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export async function warmUp(url: string, headers?: Record<string, string>): Promise<void> {
  await autocannon({ url, connections: 10, amount: 2000, headers });
}

export function table(results: readonly LoadResult[], baseline: LoadResult): string {
  const rows = results.map(
    (r) => `| ${r.name} | ${r.requestsPerSec} | ${r.p50} | ${r.p99} | ${(r.requestsPerSec / baseline.requestsPerSec).toFixed(2)} | ${r.non2xx + r.errors} |`,
  );
  return ['| target | req/s | p50 ms | p99 ms | ratio vs baseline | non-2xx+errors |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

/**
 * Measures the targets in alternating rounds and keeps each one's median round, so a burst of
 * noise from elsewhere on the machine hits every target alike instead of skewing one ratio.
 */
export async function compare(targets: readonly Target[], options: LoadOptions & { rounds?: number } = {}): Promise<LoadResult[]> {
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 3);
  const runs = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  for (const target of targets) await warmUp(target.url, target.headers);
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      runs.get(target.name)!.push(await measure(target.name, target.url, { ...options, headers: target.headers }));
    }
  }
  return targets.map((target) => {
    const sorted = [...runs.get(target.name)!].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
    return sorted[Math.floor(sorted.length / 2)];
  });
}

/** One run of the load generator in its own process (`runLoad`). */
export interface LoadJob {
  url: string;
  connections: number;
  durationSec: number;
  headers?: Record<string, string>;
  /** Host headers to rotate through, one per request on each connection (multi-tenant runs). */
  hosts?: string[];
  /** Requests to rotate through (path and headers each), instead of `hosts`. */
  requests?: { path: string; headers?: Record<string, string> }[];
  /** A write: the method and body of every request; `[<id>]` in the body becomes a fresh id per request. */
  method?: 'POST' | 'PUT' | 'PATCH';
  body?: string;
}

export interface ProcessLoadResult {
  requests: number;
  requestsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statuses: Record<number, number>;
  generatorCpuMicrosPerRequest: number;
}

/** Runs autocannon in a process of its own (./load-process.ts): a load generator inside the server's process understates the server. */
export function runLoad(job: LoadJob): Promise<ProcessLoadResult> {
  return new Promise((resolve, reject) => {
    // On stdin: a thousand requests with their headers do not fit in one command-line argument.
    const command = [process.execPath, '--import', 'tsx', 'bench/support/load-process.ts'];
    const pinned = loadCore();
    const [file, ...args] = pinned === null ? command : ['taskset', '-c', String(pinned), ...command];
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.end(JSON.stringify(job));
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as ProcessLoadResult) : reject(new Error(`load process exited ${code}`)),
    );
  });
}

/**
 * The load generator on the last core and this process (every thread) on the others, so the two
 * never take turns on one core (on 2 cores that swap moved a ratio by ±10 % between rounds).
 * BENCH_PIN=0 turns it off. Returns the generator's core, or null when not pinning (no `taskset`,
 * one core, or turned off).
 */
let pinnedCore: number | null | undefined;
export function loadCore(): number | null {
  if (pinnedCore !== undefined) return pinnedCore;
  pinnedCore = null;
  const cores = os.availableParallelism();
  if (process.env.BENCH_PIN === '0' || cores < 2) return pinnedCore;
  const pin = spawnSync('taskset', ['-a', '-p', '-c', `0-${cores - 2}`, String(process.pid)], { stdio: 'ignore' });
  if (pin.status === 0) pinnedCore = cores - 1;
  return pinnedCore;
}
