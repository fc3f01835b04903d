import { describe, expect, it } from 'vitest';
import { kill9 } from '../support/worker-process.ts';
import { checkHistory } from '../support/histories.ts';
import { addBulkMedia, dumpDatabase, mediaDigests, seedWorkspace } from './backup-support.ts';
import { moveUntilCopying, usePlacementCrashWorld, waitForMove } from './placement-support.ts';
import { workspaceRow } from './support.ts';
import { moveCollections } from '../../services/platform/placement/model.ts';
import { moveWorkflowId } from '../../workflows/contracts/move.ts';

/** Enough media that the copy is still running when the worker is killed, even on a busy machine. */
const FILES = 100;

describe('a worker killed with SIGKILL in the middle of a move', () => {
  const crash = usePlacementCrashWorld();

  it('resumes on a new worker to the same end state', async () => {
    const { bw, crew, second } = crash;
    const s = await seedWorkspace(bw.world, 'placement-crash.example.test', { entries: 5, mediaBytes: [5000] });
    await addBulkMedia(bw.world, s.dbName, FILES);
    const source = bw.world.services.mongo.db(s.dbName);
    const before = await dumpDatabase(source);
    const mediaBefore = await mediaDigests(source);
    const { moves } = moveCollections(bw.world.services);

    const first = await crew.spawn();
    // Killed once the copy has begun.
    const moveId = await moveUntilCopying(bw, second, s.workspaceId, s.dbName);
    await kill9(first);
    const cut = await moves.findOne({ _id: moveId });
    expect(cut?.state).toBe('running');
    expect(cut?.step).toBe('copying');
    // Until it resumes the workspace stays where it was, and says it is moving.
    const tenant = (await bw.call('GET', `/tenants/${s.workspaceId}`)).json().tenant;
    expect(tenant).toMatchObject({ cluster: 'default', moving: { moveId, to: 'second' } });

    await crew.spawn();
    const move = await waitForMove(bw.call, s.workspaceId, moveId);
    expect(move.state, move.error).toBe('succeeded');
    expect(move.progress.collectionsDone).toBe(move.progress.collections);

    const row = (await workspaceRow(bw.world, s.workspaceId))!;
    expect(row.cluster).toBe('second');
    expect(row.move).toBeUndefined();
    const target = second.db(s.dbName);
    expect(await dumpDatabase(target)).toEqual(before);
    expect(await mediaDigests(target)).toEqual(mediaBefore);
    const defaultNames = (await bw.world.services.mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name);
    expect(defaultNames).not.toContain(s.dbName);
    await checkHistory(bw.world.services.temporal.client.workflow.getHandle(moveWorkflowId(s.workspaceId, moveId)), 'move-resumed');
  }, 400_000);
});
