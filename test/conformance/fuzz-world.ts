import type { AddressInfo } from 'node:net';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, defaultSiteContext } from '../support/access.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { accessCollections } from '../../services/access/model.ts';

export interface FuzzTarget {
  world: World;
  origin: string;
  /** A key holding every capability, owned by the administrator (a platform operator). */
  fullKey: string;
  /** A key whose capabilities are empty: every secured operation must answer 403, declared. */
  emptyKey: string;
}

/**
 * The service on a random loopback port, as a client sees it. The empty key is written directly:
 * the key API refuses a key without capabilities, but a key whose owner lost every capability
 * behaves the same way and is what this pass stands for.
 */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  // A worker, so operations that run a workflow (workspace deletion, exports) complete as in production.
  const world = await startWorld({ worker: true });
  await world.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = world.app.server.address() as AddressInfo;
  const full = await createApiKey(world, { capabilities: [...CAPABILITIES], name: 'fuzz: every capability' });
  const empty = await createApiKey(world, { capabilities: ['content:read'], name: 'fuzz: no capability' });
  const ctx = await defaultSiteContext(world);
  await accessCollections(ctx.db).apiKeys.updateOne({ _id: empty.id }, { $set: { capabilities: [] } });
  return { world, origin: `http://127.0.0.1:${port}`, fullKey: full.key, emptyKey: empty.key };
}
