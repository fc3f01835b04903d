import { describe, expect, it } from 'vitest';
import { kill9 } from '../support/worker-process.ts';
import { taggedEntryDocs, useContentCrashWorld } from './support.ts';
import { eventually } from '../support/polling.ts';
import { checkHistory } from '../support/histories.ts';
import { contentCollections } from '../../services/content/model.ts';
import { defaultSiteContext } from '../support/access.ts';
import { termRemovalWorkflowId } from '../../workflows/contracts/term-removal.ts';

// Issue 22: deleting a term many entries use is one durable job (termRemovalWorkflow); a worker
// SIGKILLed in the middle resumes on the next one to the same end state: every entry changed once
// (version +1, one revision), the term gone.

const ENTRIES = 300;

describe('term deletion touching many entries: a worker SIGKILLed mid-job', { timeout: 300_000 }, () => {
  const crash = useContentCrashWorld();

  it('resumes on the next worker: each entry versioned and revised exactly once, the term gone', async () => {
    const { cw } = crash;
    const ctx = await defaultSiteContext(cw.world);
    const tag = (await cw.manage('POST', '/taxonomies/tag/terms', { name: 'Everywhere' })).json();
    // Setup only: published entries carrying the tag, written directly (the job is what is tested).
    const docs = taggedEntryDocs(ctx.site._id, tag.id, ENTRIES, { titlePrefix: 'Bulk', published: true });
    const { entries, revisions } = contentCollections(ctx.db);
    await entries.insertMany(docs);
    const changedCount = () => entries.countDocuments({ siteId: ctx.site._id, type: 'post', title: /^Bulk /, version: 2 });

    const first = await crash.spawnWorker();
    const request = cw.manage('DELETE', `/taxonomies/tag/terms/${tag.id}`);
    await eventually(
      async () => {
        const n = await changedCount();
        return n > 0 && n < ENTRIES - 50 ? n : undefined;
      },
      'the job under way',
      120_000,
      20,
    );
    await kill9(first);
    const atKill = await changedCount();
    expect(atKill).toBeLessThan(ENTRIES);

    await crash.spawnWorker();
    const answer = await request;
    expect(answer.statusCode, answer.body).toBe(200);
    const handle = cw.world.services.temporal.client.workflow.getHandle(termRemovalWorkflowId(cw.world.defaultWorkspace.id, ctx.site._id, 'tag', tag.id));
    expect(answer.json().job).toBe(handle.workflowId);
    const outcome = await handle.result();
    // The batch cut short by the kill reported nothing; its entries were found already changed on retry.
    expect(outcome.entriesChanged).toBeLessThanOrEqual(ENTRIES);
    expect(outcome.entriesChanged).toBeGreaterThan(ENTRIES - 100);

    // The same end state as an uninterrupted run: every entry once, nothing twice.
    const after = await entries.find({ siteId: ctx.site._id, title: /^Bulk / }).toArray();
    expect(after).toHaveLength(ENTRIES);
    for (const doc of after) {
      expect(doc.version).toBe(2);
      expect(doc.terms.tag).toEqual([]);
    }
    // Each entry's state before the job is a revision row (written once), its state now its own revision with the job's note.
    const revs = await revisions.find({ siteId: ctx.site._id, entryId: { $in: after.map((d) => d._id) } }).toArray();
    expect(revs).toHaveLength(ENTRIES);
    expect(new Set(revs.map((r) => r.version))).toEqual(new Set([1]));
    expect(new Set(after.map((doc) => doc.changeNote))).toEqual(new Set([`term tag/${tag.slug} deleted`]));
    expect((await cw.manage('GET', `/taxonomies/tag/terms/${tag.id}`)).statusCode).toBe(404);
    // The public read shows the change (the generation moved with the job's writes).
    const publicEntry = (await cw.pub('/content/bulk-1')).json();
    expect((publicEntry.data ?? publicEntry).terms).toMatchObject({ tag: [] });
    await checkHistory(handle, 'term-removal');
  });
});
