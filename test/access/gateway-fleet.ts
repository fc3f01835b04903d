// Real gateway processes for the multi-gateway tests (test/access/gateway-process.ts), and a tiny
// HTTP client that can set Host (fetch cannot).
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import type { World } from '../support/world.ts';

export interface Gateway {
  base: string;
  port: number;
  child: ChildProcess;
  /** Lines the process printed (PORT=…, CUT). */
  output: string[];
}

export function startGateway(world: World, children: ChildProcess[], env: Record<string, string> = {}): Promise<Gateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/access/gateway-process.ts'], {
    env: {
      ...process.env,
      MONGODB_URI: world.config.MONGODB_URI,
      TEMPORAL_ADDRESS: world.config.TEMPORAL_ADDRESS,
      DB_PREFIX: world.config.DB_PREFIX,
      SECRET_KEY: world.config.SECRET_KEY,
      STATE_LEASE_MS: world.config.STATE_LEASE_MS.toString(),
      // Workspace steps go to this world's worker, and the routes wait for them as the world does.
      TEMPORAL_TASK_QUEUE: world.config.TEMPORAL_TASK_QUEUE,
      LIFECYCLE_WAIT_MS: world.config.LIFECYCLE_WAIT_MS.toString(),
      LOG_LEVEL: process.env.GATEWAY_LOG_LEVEL ?? 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      output.push(...lines);
      if (process.env.GATEWAY_LOG_LEVEL) for (const line of lines) process.stderr.write(`[gateway ${child.pid}] ${line}\n`);
      const port = lines.map((line) => /^PORT=(\d+)$/.exec(line)?.[1]).find(Boolean);
      if (port) resolve({ base: `http://127.0.0.1:${port}`, port: Number(port), child, output });
    });
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}`)));
  });
}

export async function stopGateways(children: ChildProcess[]): Promise<void> {
  for (const child of children) {
    if (child.exitCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
    }
  }
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
}

export interface Answer {
  status: number;
  body: string;
}

export function call(
  gateway: Gateway,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; host?: string } = {},
): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: gateway.port,
        method,
        path,
        headers: {
          host: options.host ?? `127.0.0.1:${gateway.port}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload).toString() } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
