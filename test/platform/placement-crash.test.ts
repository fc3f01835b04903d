import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MongoClient } from 'mongodb';
import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import { eventually } from '../support/polling.ts';
import { checkHistory } from '../support/histories.ts';
import { addBulkMedia, dumpDatabase, mediaDigests, seedWorkspace, startBackupWorld, type BackupWorld, type Seeded } from './backup-support.ts';
import { dropSecond, ensureSecondCluster, prefixedDatabases, secondClient, TWO_CLUSTERS, waitForMove } from './placement-support.ts';
import { workspaceRow } from './support.ts';
import { moveCollections } from '../../services/platform/placement/model.ts';
import { moveWorkflowId } from '../../workflows/contracts/move.ts';

/** Enough media that the copy is still running when the worker is killed, even on a busy machine. */
const FILES = 100;

describe('a worker killed with SIGKILL in the middle of a move', () => {
  let bw: BackupWorld;
  let s: Seeded;
  let second: MongoClient;
  const children: ChildProcess[] = [];
  const spawnWorker = async () => {
    const child = await spawnWorkerProcess(bw.world.config, TWO_CLUSTERS);
    children.push(child);
    return child;
  };
  beforeAll(async () => {
    await ensureSecondCluster();
    // No in-process worker: only the child processes work.
    bw = await startBackupWorld({ env: TWO_CLUSTERS });
    s = await seedWorkspace(bw.world, 'placement-crash.example.test', { entries: 5, mediaBytes: [5000] });
    await addBulkMedia(bw.world, s.dbName, FILES);
    second = secondClient();
  }, 180_000);
  afterAll(async () => {
    for (const child of children) await kill9(child);
    if (bw) await dropSecond(bw.world);
    await second?.close();
    await bw?.world.close();
  });

  it('resumes on a new worker to the same end state', async () => {
    const source = bw.world.services.mongo.db(s.dbName);
    const before = await dumpDatabase(source);
    const mediaBefore = await mediaDigests(source);
    const { moves } = moveCollections(bw.world.services);

    const first = await spawnWorker();
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/move`, { cluster: 'second' });
    expect(started.statusCode, started.body).toBe(202);
    const moveId = started.json().move.id;
    // Killed once the copy has begun (the row says the workspace moves, the target holds something).
    await eventually(
      async () => (await workspaceRow(bw.world, s.workspaceId))?.move?.id === moveId && (await prefixedDatabases(second, bw.world)).includes(s.dbName),
      'the move to start copying',
      120_000,
      5,
    );
    await kill9(first);
    const cut = await moves.findOne({ _id: moveId });
    expect(cut?.state).toBe('running');
    expect(cut?.step).toBe('copying');
    // Until it resumes the workspace stays where it was, and says it is moving.
    const tenant = (await bw.call('GET', `/tenants/${s.workspaceId}`)).json().tenant;
    expect(tenant).toMatchObject({ cluster: 'default', moving: { moveId, to: 'second' } });

    await spawnWorker();
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
