import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Worker } from '@temporalio/worker';
import { loadConfig, type Config } from '../../services/core/config.ts';
import type { Services } from '../../services/core/context.ts';
import { closeServices } from '../../services/core/services.ts';
import { bootstrapPlatform } from '../../services/platform/bootstrap.ts';
import { createRuntime, type RuntimeOptions } from '../../services/runtime.ts';
import { createWorker } from '../../services/worker-factory.ts';
import { provisionInProcess, requestWorkspace, type WorkspaceRequest } from '../../services/platform/provisioning.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';

export interface World {
  config: Config;
  services: Services;
  app: FastifyInstance;
  admin: { email: string; password: string };
  /** TOTP seeds of the accounts the test helpers enrolled (`host:email` → seed), as an authenticator app holds them. */
  totpSeeds: Map<string, string>;
  /** The bootstrapped workspace that `localhost` resolves to. */
  defaultWorkspace: { id: string; dbName: string };
  runtime: Awaited<ReturnType<typeof createRuntime>>;
  /** Drops every database this world created. */
  close(): Promise<void>;
}

export interface WorldOptions extends RuntimeOptions {
  /** Run a Temporal worker in-process on this world's own task queue. */
  worker?: boolean;
  env?: Record<string, string>;
}

/**
 * A complete service on the real engines, isolated from every other test by its own database
 * prefix and Temporal task queue. The default workspace and its administrator are bootstrapped.
 */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const tag = randomBytes(4).toString('hex');
  const admin = { email: `admin-${tag}@example.test`, password: `pw-${randomBytes(12).toString('hex')}` };
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DB_PREFIX: `t${tag}_`,
    TEMPORAL_TASK_QUEUE: `test-${tag}`,
    SECRET_KEY: randomBytes(32).toString('hex'),
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    ...options.env,
  });
  const runtime = await createRuntime(config, options);
  const { services } = runtime;
  await bootstrapPlatform(services);
  const local = await services.sites.resolve('localhost');
  if (!local) throw new Error('bootstrap left no default site');
  const defaultWorkspace = { id: local.workspace._id, dbName: local.workspace.dbName };
  // Per-process state is held only while the change feed vouches for it (docs/access.md).
  await services.changeFeed.start();
  services.sites.forget();
  const app = await runtime.buildApp({ logger: false });
  await app.ready();

  let worker: { worker: Worker; run: Promise<void>; close(): Promise<void> } | undefined;
  if (options.worker) {
    const bundlePath = process.env.TEST_WORKFLOW_BUNDLE;
    const created = await createWorker(services, {
      workflowBundle: bundlePath ? { codePath: resolve(bundlePath) } : undefined,
    });
    const run = created.worker.run();
    worker = {
      worker: created.worker,
      run,
      async close() {
        await created.recovery.stop();
        created.worker.shutdown();
        await run.catch(() => undefined);
        await created.connection.close();
      },
    };
  }

  return {
    config,
    services,
    app,
    admin,
    totpSeeds: new Map(),
    defaultWorkspace,
    runtime,
    async close() {
      await worker?.close();
      await app.close();
      await services.audit.settled();
      await services.searchSync.settled();
      const { databases } = await services.mongo.db('admin').admin().listDatabases({ nameOnly: true });
      for (const { name } of databases) {
        if (name.startsWith(config.DB_PREFIX)) await services.mongo.db(name).dropDatabase();
      }
      await closeServices(services);
    },
  };
}

/**
 * A workspace asked for and provisioned in this process, as the bootstrap does: the request
 * (row, domains claimed all or none) and then the workspace actor's own provision steps, no worker
 * needed. Dropped with the world.
 */
export async function createWorkspace(services: Services, input: WorkspaceRequest) {
  const requested = await requestWorkspace(services, input);
  const workspace = await provisionInProcess(services, requested._id);
  const site = await platformCollections(services).sites.findOne({ _id: requested.provisioning!.siteId });
  if (!site) throw new Error(`workspace ${workspace._id} has no site`);
  return { workspace, site };
}

/**
 * Another workspace, made in process through the workspace actor's own steps (no worker needed):
 * its first site answers at `host` and has `admin` as its administrator. Dropped with the world.
 */
export async function addLocalWorkspace(world: World, host: string, admin: { email: string; password: string }) {
  const { workspace, site } = await createWorkspace(world.services, { name: host, domains: [host], admin });
  return { workspaceId: workspace._id, siteId: site._id, host };
}
