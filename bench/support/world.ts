import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureEngines, stopEngines } from '../../scripts/engines.mjs';
import { loadConfig } from '../../services/core/config.ts';
import { closeServices } from '../../services/core/services.ts';
import type { CoreServices } from '../../services/core/context.ts';
import { bootstrapPlatform } from '../../services/platform/bootstrap.ts';
import { createRuntime, type RuntimeOptions } from '../../services/runtime.ts';

/**
 * BENCH_OWN_ENGINES=1: a MongoDB engine and a Temporal dev server of this run's own (random ports,
 * a temporary data folder; MONGO_HEAP sizes the engine), so a run with 1,000 workspace databases
 * and their workflows loads nobody else's engines (`ports`: fixed ones instead of random; Temporal's
 * UI and metrics take the two after its own). Sets MONGODB_URI / TEMPORAL_ADDRESS for this
 * process and the processes it spawns; returns the stop function (also dropping the data).
 */
export async function ownEnginesIfAsked(ports?: { mongo: number; temporal: number }): Promise<() => Promise<void>> {
  if (process.env.BENCH_OWN_ENGINES !== '1') return async () => undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-engines-'));
  // Fixed ports: the caller's, or BENCH_MONGO_PORT / BENCH_TEMPORAL_PORT (a shared machine hands out ranges); else random ones.
  const fixedMongo = ports?.mongo ?? (process.env.BENCH_MONGO_PORT ? Number(process.env.BENCH_MONGO_PORT) : undefined);
  const fixedTemporal = ports?.temporal ?? (process.env.BENCH_TEMPORAL_PORT ? Number(process.env.BENCH_TEMPORAL_PORT) : undefined);
  const mongoPort = fixedMongo ?? 28000 + Math.floor(Math.random() * 1000);
  const temporalPort = fixedTemporal ?? 7700 + Math.floor(Math.random() * 200);
  // Temporal's UI and metrics ports follow its own (a fixed port keeps them beside it).
  const temporalPorts = fixedTemporal !== undefined ? { temporalHttpPort: temporalPort + 1, temporalMetricsPort: temporalPort + 2 } : {};
  const engines = await ensureEngines({ dataDir, mongoPort, temporalPort, ...temporalPorts, log: () => undefined, timeoutMs: 180_000 });
  process.env.MONGODB_URI = engines.mongoUri;
  process.env.TEMPORAL_ADDRESS = engines.temporalAddress;
  // Where its pid files are: a benchmark may read the engine's CPU time from /proc (bench/backup.ts).
  process.env.BENCH_OWN_ENGINES_DIR = dataDir;
  return async () => {
    await stopEngines({ dataDir, log: () => undefined });
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}

/**
 * As services/gateway.ts does: without its change feed a gateway holds nothing per site and reads
 * the database on every request (the site by its host, its access state), which is not what a
 * deployment serves. Every gateway a benchmark builds starts it.
 */
export async function startChangeFeed(services: CoreServices): Promise<void> {
  await services.changeFeed.start();
  for (let waited = 0; !services.changeFeed.trusted(); waited += 100) {
    if (waited > 60_000) throw new Error('the change feed did not come up');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The full service for a benchmark: real engines (local ones unless MONGODB_URI and
 * TEMPORAL_ADDRESS are set), its own database prefix, logging off, dropped at the end (kept with
 * `keepData` and a fixed `DB_PREFIX` in `env`: a later run finds the same seeded workspace).
 */
export async function startBenchWorld(options: RuntimeOptions & { env?: Record<string, string>; keepData?: boolean } = {}) {
  if (!process.env.MONGODB_URI || !process.env.TEMPORAL_ADDRESS) {
    const engines = await ensureEngines({ dataDir: resolve(process.env.DATA_DIR ?? '.data'), log: () => undefined });
    process.env.MONGODB_URI ??= engines.mongoUri;
    process.env.TEMPORAL_ADDRESS ??= engines.temporalAddress;
  }
  const tag = randomBytes(4).toString('hex');
  const admin = { email: `bench-${tag}@example.test`, password: `pw-${randomBytes(12).toString('hex')}` };
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    DB_PREFIX: `b${tag}_`,
    TEMPORAL_TASK_QUEUE: `bench-${tag}`,
    SECRET_KEY: randomBytes(32).toString('hex'),
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    ...options.env,
  });
  const runtime = await createRuntime(config, options);
  await bootstrapPlatform(runtime.services);
  const app = await runtime.buildApp({ logger: false });
  await startChangeFeed(runtime.services);
  return {
    ...runtime,
    app,
    admin,
    config,
    async close() {
      await app.close();
      await runtime.services.searchSync.settled();
      // The feed stops before the databases go: its renewals would fail against dropped collections.
      await runtime.services.changeFeed.stop();
      // Engines of the run's own are thrown away with their data (ownEnginesIfAsked): nothing to drop.
      if (process.env.BENCH_OWN_ENGINES === '1' || options.keepData) return closeServices(runtime.services);
      const { databases } = await runtime.services.mongo.db('admin').admin().listDatabases({ nameOnly: true });
      for (const { name } of databases) {
        if (name.startsWith(config.DB_PREFIX)) await runtime.services.mongo.db(name).dropDatabase();
      }
      await closeServices(runtime.services);
    },
  };
}
