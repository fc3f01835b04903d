import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { ensureEngines } from '../../scripts/engines.mjs';
import { loadConfig } from '../../services/core/config.ts';
import { closeServices } from '../../services/core/services.ts';
import { bootstrapPlatform } from '../../services/platform/bootstrap.ts';
import { createRuntime, type RuntimeOptions } from '../../services/runtime.ts';

/**
 * The full service for a benchmark: real engines (local ones unless MONGODB_URI and
 * TEMPORAL_ADDRESS are set), its own database prefix, logging off, dropped at the end.
 */
export async function startBenchWorld(options: RuntimeOptions & { env?: Record<string, string> } = {}) {
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
  return {
    ...runtime,
    app,
    admin,
    config,
    async close() {
      await app.close();
      // The feed stops before the databases go: its renewals would fail against dropped collections.
      await runtime.services.changeFeed.stop();
      const { databases } = await runtime.services.mongo.db('admin').admin().listDatabases({ nameOnly: true });
      for (const { name } of databases) {
        if (name.startsWith(config.DB_PREFIX)) await runtime.services.mongo.db(name).dropDatabase();
      }
      await closeServices(runtime.services);
    },
  };
}
