import { randomBytes } from 'node:crypto';

export interface Provisioned {
  ids: string[];
  hosts: string[];
  seconds: number;
  /** Answers that were not 202 with the workspace already `active` (still provisioning, or refused). */
  notActive: number;
  perMinute: number;
}

/**
 * Provisions `count` workspaces through `POST /tenants` (the workspace actor does the work; a worker
 * must run), `concurrency` requests at a time, each with one site on its own host. Shared by the
 * benchmarks that need many workspaces (bench/workspaces.ts, bench/readpath.ts).
 */
export async function provisionWorkspaces(address: string, operatorKey: string, count: number, concurrency: number): Promise<Provisioned> {
  const tag = randomBytes(3).toString('hex');
  const ids: string[] = [];
  const hosts: string[] = [];
  let next = 0;
  let notActive = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const host = `w${i}-${tag}.bench.test`;
        const response = await fetch(`${address}/api/manage/v1/tenants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Bench ${i}`, domains: [host], admin: { email: `owner${i}@${host}`, password: 'correct horse battery staple' } }),
        });
        const body = (await response.json()) as { tenant?: { id: string; status: string } };
        if (response.status !== 202 || body.tenant?.status !== 'active') notActive++;
        if (body.tenant) {
          ids.push(body.tenant.id);
          hosts.push(host);
        }
        if ((i + 1) % 100 === 0) process.stderr.write(`  provisioned ${i + 1}/${count} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { ids, hosts, seconds, notActive, perMinute: (ids.length / seconds) * 60 };
}

/** Waits until every provisioned workspace is `active` (the route answers 202 after a bounded wait). */
export async function waitUntilActive(address: string, operatorKey: string, ids: readonly string[], timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const response = await fetch(`${address}/api/manage/v1/tenants/${id}`, { headers: { authorization: `Bearer ${operatorKey}` } });
      const body = (await response.json()) as { status?: string; tenant?: { status?: string } };
      if ((body.tenant?.status ?? body.status) === 'active') break;
      if (Date.now() > deadline) throw new Error(`workspace ${id} not active in time`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
