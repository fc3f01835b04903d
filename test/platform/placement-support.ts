import { MongoClient } from 'mongodb';
import { ensureEngines } from '../../scripts/engines.mjs';
import type { World } from '../support/world.ts';
import { eventually } from '../support/polling.ts';
import type { OperatorCall } from './backup-support.ts';

/**
 * A second local MongoDB engine, on its own port and data directory, started once for the
 * placement tests (never the shared 27117): the "other cluster" a workspace is placed on or moved to.
 */
export const SECOND_PORT = 27617;
export const SECOND_URI = `mongodb://127.0.0.1:${SECOND_PORT}`;
export const TWO_CLUSTERS = { MONGODB_CLUSTERS: `second=${SECOND_URI}` };

export async function ensureSecondCluster(): Promise<void> {
  await ensureEngines({ dataDir: '/tmp/placement-mongo2', engineDir: '/work/main/.engines', mongoPort: SECOND_PORT, temporal: false, log: () => undefined });
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
