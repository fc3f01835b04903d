import { describe, expect, it } from 'vitest';
import { ObjectId } from 'mongodb';
import { kill9 } from '../support/worker-process.ts';
import { eventually } from '../support/polling.ts';
import { addBulkMedia, seedWorkspace } from './backup-support.ts';
import { moveUntilCopying, prefixedDatabases, usePlacementCrashWorld, waitForMove } from './placement-support.ts';
import { databaseNames, waitForWorkspace, workspaceRow } from './support.ts';
import { moveCollections } from '../../services/platform/placement/model.ts';
import { contentCollections } from '../../services/content/model.ts';

// Deleting a workspace while it moves (docs/placement.md, "With the other workspace work"): during
// the switch the deletion is refused (409) with nothing changed; before it, the move stops and its
// copy is dropped. Workers in child processes (no in-process one), so the switch can be held.

describe('deleting a workspace while it moves to another cluster', () => {
  const crash = usePlacementCrashWorld();

  it('refuses the deletion during the switch, changing nothing; once moved, the deletion runs on the new cluster', async () => {
    const { bw, crew, second } = crash;
    const s = await seedWorkspace(bw.world, 'placement-delete-switch.example.test', { entries: 3, mediaBytes: [5000] });
    const started = await bw.call('POST', `/tenants/${s.workspaceId}/move`, { cluster: 'second' });
    expect(started.statusCode, started.body).toBe(202);
    const moveId = started.json().move.id;
    // A write that never said it finished (its process died): the switch's drain waits for it for
    // MOVE_DRAIN_MS, long enough to kill the worker inside the switch.
    const entry = (await contentCollections(bw.world.services.mongo.db(s.dbName)).entries.findOne({ siteId: s.siteId }))!;
    await moveCollections(bw.world.services).changes.insertOne({
      _id: new ObjectId(),
      moveId,
      collection: 'content_entries',
      ids: [entry._id],
      pending: true,
      at: new Date(),
    });
    const worker = await crew.spawn();
    await eventually(async () => (await workspaceRow(bw.world, s.workspaceId))?.move?.state === 'switching', 'the switch to begin', 120_000, 5);
    await kill9(worker);
    const held = (await workspaceRow(bw.world, s.workspaceId))!;
    expect(held.move).toMatchObject({ id: moveId, state: 'switching' });

    const refused = await bw.call('DELETE', `/tenants/${s.workspaceId}?dropDatabase=true`);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toEqual({ error: 'A move of this workspace is switching clusters: delete it once the move has ended' });
    expect(await workspaceRow(bw.world, s.workspaceId)).toEqual(held);
    expect((await bw.call('GET', `/tenants/${s.workspaceId}`)).json().tenant.status).toBe('active');

    // A new worker finishes the switch; the deletion is then accepted and keeps the data on the new cluster for the grace period.
    await crew.spawn();
    const move = await waitForMove(bw.call, s.workspaceId, moveId);
    expect(move.state, move.error).toBe('succeeded');
    const accepted = await bw.call('DELETE', `/tenants/${s.workspaceId}`);
    expect(accepted.statusCode, accepted.body).toBe(202);
    const deleted = await waitForWorkspace(bw.world, s.workspaceId, (w) => w.status === 'deleted');
    expect(deleted.cluster).toBe('second');
    expect(deleted.move).toBeUndefined();
    expect(await prefixedDatabases(second, bw.world)).toContain(s.dbName);
    expect(await databaseNames(bw.world)).not.toContain(s.dbName);
  }, 400_000);

  it('a deletion while the move copies stops the move: its copy dropped, the workspace deleted where it was', async () => {
    const { bw, crew, second } = crash;
    if (crew.children.every((child) => child.exitCode !== null || child.signalCode !== null)) await crew.spawn();
    const s = await seedWorkspace(bw.world, 'placement-delete-copy.example.test', { entries: 3, mediaBytes: [5000] });
    // Enough media that the copy is still running when the deletion comes, even on a busy machine.
    await addBulkMedia(bw.world, s.dbName, 60);
    const moveId = await moveUntilCopying(bw, second, s.workspaceId, s.dbName);
    expect((await moveCollections(bw.world.services).moves.findOne({ _id: moveId }))?.step).toBe('copying');

    const accepted = await bw.call('DELETE', `/tenants/${s.workspaceId}`);
    expect(accepted.statusCode, accepted.body).toBe(202);
    const move = await waitForMove(bw.call, s.workspaceId, moveId);
    expect(move.state).toBe('failed');
    expect(move.error).toMatch(/Workspace is (deleting|deleted|no longer active or suspended)/);
    const deleted = await waitForWorkspace(bw.world, s.workspaceId, (w) => w.status === 'deleted');
    expect(deleted.cluster).toBeUndefined();
    expect(deleted.move).toBeUndefined();
    // The data stays where it was for the grace period; nothing of it is left on the target.
    expect(await databaseNames(bw.world)).toContain(s.dbName);
    expect(await prefixedDatabases(second, bw.world)).not.toContain(s.dbName);
    expect(await moveCollections(bw.world.services).changes.countDocuments({ moveId })).toBe(0);
  }, 400_000);
});
