import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContentWorld, taggedEntryDocs, type ContentWorld } from './support.ts';
import { eventually } from '../support/polling.ts';
import { contentCollections, COLLECTIONS } from '../../services/content/model.ts';
import { defaultSiteContext } from '../support/access.ts';
import { termRemovalWorkflowId } from '../../workflows/contracts/term-removal.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { cancelWorkspaceWork } from '../../services/platform/deletion.ts';

// A workspace deletion stops every running term-removal job of the workspace (the content
// feature's `stopWork`), as it stops entry schedules: no job goes on writing into a deleted workspace.

const ENTRIES = 150; // above the inline limit (100): the deletion is a job

describe('workspace deletion stops running term-removal jobs', { timeout: 180_000 }, () => {
  let cw: ContentWorld;
  beforeAll(async () => {
    cw = await startContentWorld(); // no worker: the job is started and stays running
  }, 120_000);
  afterAll(async () => cw?.close(), 120_000);

  it('the running job is terminated, counted in what the deletion stopped, and its entries are left alone', async () => {
    const ctx = await defaultSiteContext(cw.world);
    const tag = (await cw.manage('POST', '/taxonomies/tag/terms', { name: 'Doomed' })).json();
    const docs = taggedEntryDocs(ctx.site._id, tag.id, ENTRIES, { titlePrefix: 'Stop', published: false });
    await contentCollections(ctx.db).entries.insertMany(docs);

    const workflowId = termRemovalWorkflowId(cw.world.defaultWorkspace.id, ctx.site._id, 'tag', tag.id);
    const handle = cw.world.services.temporal.client.workflow.getHandle(workflowId);
    const request = cw.manage('DELETE', `/taxonomies/tag/terms/${tag.id}`);
    await eventually(async () => ((await handle.describe().catch(() => null))?.status.name === 'RUNNING' ? true : undefined), 'the job started', 60_000);
    expect(await ctx.db.collection(COLLECTIONS.jobs).countDocuments({ _id: workflowId } as never)).toBe(1);

    // Deletion's step 2 (the workspace is `deleting`): every feature stops its work.
    await platformCollections(cw.world.services).workspaces.updateOne({ _id: cw.world.defaultWorkspace.id }, { $set: { status: 'deleting' } });
    const stopped = await cancelWorkspaceWork(cw.world.services, cw.world.defaultWorkspace.id);
    expect(stopped).toMatchObject({ termRemovals: 1 });
    expect((await handle.describe()).status.name).toBe('TERMINATED');
    // Stopping again (a retried deletion step) is harmless.
    expect(await cancelWorkspaceWork(cw.world.services, cw.world.defaultWorkspace.id)).toMatchObject({ termRemovals: 1 });

    // The waiting request answers that the deletion did not finish; nothing was changed (no worker ever ran a batch).
    const answer = await request;
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ deleted: false, job: workflowId });
    expect(await contentCollections(ctx.db).entries.countDocuments({ siteId: ctx.site._id, 'terms.tag': tag.id, version: 1 })).toBe(ENTRIES);
  });
});
