import { MongoClient } from 'mongodb';
import { ensureEngines } from '../../scripts/engines.mjs';
import type { World } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import { afterAll, beforeAll, expect } from 'vitest';
import { workspaceRow } from './support.ts';
import { startBackupWorld, workerCrew, type BackupWorld, type OperatorCall } from './backup-support.ts';

/**
 * A second local MongoDB engine, on its own port and data directory, started once for the
 * placement tests (never the shared 27117): the "other cluster" a workspace is placed on or moved to.
 */
export const SECOND_PORT = 27617;
export const SECOND_URI = `mongodb://127.0.0.1:${SECOND_PORT}`;
export const TWO_CLUSTERS = { MONGODB_CLUSTERS: `second=${SECOND_URI}` };

export async function ensureSecondCluster(): Promise<void> {
  // A folder of the run's: test/global-setup.ts stops this engine when the run ends.
  const dataDir = process.env.TEST_SECOND_CLUSTER_DIR;
  if (!dataDir) throw new Error('TEST_SECOND_CLUSTER_DIR is set by test/global-setup.ts');
  await ensureEngines({ dataDir, mongoPort: SECOND_PORT, temporal: false, log: () => undefined });
}

/** A client of the second engine, outside the service under test (what is really there). */
export const secondClient = () => new MongoClient(SECOND_URI, { serverSelectionTimeoutMS: 10_000 });

/** Database names with the world's prefix on a client's server. */
export async function prefixedDatabases(client: MongoClient, world: World): Promise<string[]> {
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  return databases.map((d) => d.name).filter((name) => name.startsWith(world.config.DB_PREFIX));
}

/** Drops what the world left on the second engine (the world's own close drops the default one's). */
export async function dropSecond(world: World): Promise<void> {
  const client = secondClient();
  try {
    for (const name of await prefixedDatabases(client, world)) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/**
 * A world over two clusters for the placement crash tests, made before them and closed after:
 * no in-process worker (only the crew's child processes, which a test may kill, work).
 */
export function usePlacementCrashWorld(): { bw: BackupWorld; crew: ReturnType<typeof workerCrew>; second: MongoClient } {
  const crash = {} as { bw: BackupWorld; crew: ReturnType<typeof workerCrew>; second: MongoClient };
  beforeAll(async () => {
    await ensureSecondCluster();
    crash.bw = await startBackupWorld({ env: TWO_CLUSTERS });
    crash.crew = workerCrew(crash.bw, TWO_CLUSTERS);
    crash.second = secondClient();
  }, 180_000);
  afterAll(async () => {
    await crash.crew?.stopAll();
    if (crash.bw) await dropSecond(crash.bw.world);
    await crash.second?.close();
    await crash.bw?.world.close();
  });
  return crash;
}

/** Starts a move of the workspace to `second` and answers its id once the copy has begun (the row says it moves, the target holds its database). */
export async function moveUntilCopying(bw: BackupWorld, second: MongoClient, workspaceId: string, dbName: string): Promise<string> {
  const started = await bw.call('POST', `/tenants/${workspaceId}/move`, { cluster: 'second' });
  expect(started.statusCode, started.body).toBe(202);
  const moveId: string = started.json().move.id;
  await eventually(
    async () => (await workspaceRow(bw.world, workspaceId))?.move?.id === moveId && (await prefixedDatabases(second, bw.world)).includes(dbName),
    'the move to start copying',
    120_000,
    5,
  );
  return moveId;
}

export async function waitForMove(call: OperatorCall, workspaceId: string, moveId: string, ms = 180_000) {
  return eventually(
    async () => {
      const { move } = (await call('GET', `/tenants/${workspaceId}/moves/${moveId}`)).json();
      return move.state === 'running' ? null : move;
    },
    `move ${moveId} to end`,
    ms,
    100,
  );
}
