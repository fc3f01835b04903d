import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Services } from '../core/context.ts';
import { randomToken } from '../core/ids.ts';
import { PLATFORM_COLLECTIONS } from '../core/tenants.ts';
import { DEFAULT_SITE_META_ID } from '../tenancy/site-resolver.ts';
import { provisionInProcess, requestWorkspace } from './provisioning.ts';
import { ensureIndexes } from '../tenancy/indexes.ts';
import { platformIndexSpecs } from './platform-indexes.ts';
import { DEFAULT_SITE_ID } from '../tenancy/platform-db.ts';

export interface BootstrapResult {
  created: boolean;
  /** Only present when this call created the administrator with a generated password: where it was written. */
  generatedAdmin?: { email: string; passwordFile: string };
}

/** Where a generated administrator password is kept: `DATA_DIR/initial-admin-password` (README). */
export const initialPasswordFile = (dataDir: string) => resolve(join(dataDir, 'initial-admin-password'));

/**
 * A generated password goes to a file only its owner can read, never to the output: container
 * platforms keep stdout and stderr in log stores that many people (and systems) read.
 */
async function writePasswordFile(dataDir: string, password: string): Promise<string> {
  const file = initialPasswordFile(dataDir);
  await mkdir(resolve(dataDir), { recursive: true, mode: 0o700 });
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  // `mode` applies only when the file is created: a file left by an earlier data set is narrowed too.
  await chmod(file, 0o600);
  return file;
}

/**
 * First start: the default workspace, its site and an administrator, asked for and provisioned
 * like any other workspace (the actor's request and steps, run in this process since no worker
 * need run yet). The workspace gets a generated id like any other, so deployments sharing one
 * Temporal namespace never share the business-key workflow ids built from it
 * (`export:<workspaceId>:<siteId>`, ...). Several gateways may start at once; the insert of the
 * meta row decides which one provisions (and writes a generated password to
 * `DATA_DIR/initial-admin-password`, mode 0600).
 */
export async function bootstrapPlatform(services: Services): Promise<BootstrapResult> {
  const meta = services.platformDb.collection<{ _id: string; siteId?: string; claimedAt?: Date }>(PLATFORM_COLLECTIONS.meta);
  await ensureIndexes(services.platformDb, platformIndexSpecs);

  // A start reads one row whatever the number of workspaces: index upgrades after a release are
  // handed to the workspace actors by the worker's reconciler (`lifecycle-reconciler.ts`).
  const existing = await meta.findOne({ _id: DEFAULT_SITE_META_ID });
  if (existing?.siteId) return { created: false };
  const claim = await meta.updateOne({ _id: 'bootstrap-claim' }, { $setOnInsert: { claimedAt: services.clock.now() } }, { upsert: true });
  if (claim.upsertedCount === 0) return { created: false };

  const email = services.config.ADMIN_EMAIL ?? 'admin@localhost.test';
  const generated = !services.config.ADMIN_PASSWORD;
  const password = services.config.ADMIN_PASSWORD ?? randomToken(18);
  // Written before the administrator exists: a start that cannot keep the password creates no account nobody can sign in to.
  const passwordFile = generated ? await writePasswordFile(services.config.DATA_DIR, password) : undefined;
  const requested = await requestWorkspace(services, {
    name: 'Default workspace',
    siteName: 'Default site',
    siteId: DEFAULT_SITE_ID,
    domains: [],
    admin: { email, password, name: 'Administrator', platformOperator: true },
  });
  // Recorded before the steps run: should this start die half-way, the worker's reconciler finishes
  // the `provisioning` row through the actor and `localhost` then resolves.
  await meta.updateOne({ _id: DEFAULT_SITE_META_ID }, { $set: { siteId: DEFAULT_SITE_ID } }, { upsert: true });
  await provisionInProcess(services, requested._id);
  return { created: true, generatedAdmin: passwordFile ? { email, passwordFile } : undefined };
}
