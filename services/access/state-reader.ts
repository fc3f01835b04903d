import type { Db } from 'mongodb';
import { readAccessState, type AccessState } from '../site/settings-store.ts';
import { createKeyedBatcher } from './batching.ts';

/**
 * The site's access state (switches + version), read for every request but coalesced per gateway:
 * requests that arrive while a read is in flight share the next read, which starts after they
 * arrived, so a switch flipped before a request is always seen by it.
 */
export function createStateReader(workspaceDb: (dbName: string) => Db) {
  const read = createKeyedBatcher<null, AccessState>(async (lane, items) => {
    const [dbName, siteId] = JSON.parse(lane) as [string, string];
    const state = await readAccessState(workspaceDb(dbName), siteId);
    return items.map(() => state);
  });
  return (db: Db, siteId: string): Promise<AccessState> => read(JSON.stringify([db.databaseName, siteId]), null);
}
