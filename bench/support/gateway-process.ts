import { spawn, type ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';

/** A port free on loopback now (the OS's pick). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface WorldIdentity {
  config: { DB_PREFIX: string; TEMPORAL_TASK_QUEUE: string; SECRET_KEY: string };
  admin: { email: string; password: string };
}

/**
 * A gateway process (`services/gateway.ts`, the real entry) on a bench world's databases and task
 * queue, logging at `info` (to /dev/null), `env` on top; answers once its `/healthz` does. The
 * child joins `children` so the caller stops it. `app`: a compiled app folder
 * (support/compiled-app.ts), run as the image runs it (`node dist/services/gateway.js`); without
 * it, the sources under tsx (what `npm start` runs).
 */
export async function startGatewayProcess(
  world: WorldIdentity,
  env: Record<string, string>,
  options: { nodeArgs?: string[]; children: ChildProcess[]; app?: string },
): Promise<{ base: string; pid: number }> {
  const port = await freePort();
  const entry = options.app ? ['dist/services/gateway.js'] : ['--import', 'tsx', 'services/gateway.ts'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
    ...(options.app ? { cwd: options.app } : {}),
    env: {
      ...process.env,
      // Nothing of this process's loaders reaches a compiled gateway.
      ...(options.app ? { NODE_OPTIONS: '' } : {}),
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      DB_PREFIX: world.config.DB_PREFIX,
      TEMPORAL_TASK_QUEUE: world.config.TEMPORAL_TASK_QUEUE,
      SECRET_KEY: world.config.SECRET_KEY,
      ADMIN_EMAIL: world.admin.email,
      ADMIN_PASSWORD: world.admin.password,
      // A long lease: on a loaded machine a late renewal would send one gateway's reads to the full
      // path for a while (no lane), which says nothing about what is compared.
      STATE_LEASE_MS: '60000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  options.children.push(child);
  const base = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 200) {
    if (waited > 120_000) throw new Error('a gateway did not start');
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { base, pid: child.pid! };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
