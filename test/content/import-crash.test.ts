import { describe, expect, it } from 'vitest';
import { kill9 } from '../support/worker-process.ts';
import { defaultSiteContext, useContentCrashWorld } from './support.ts';
import { eventually } from '../support/polling.ts';
import { contentCollections } from '../../services/content/model.ts';
import { importsCollection } from '../../services/content/import-model.ts';
import { entryLine, importFinished, postImport } from './import-support.ts';

// Issue 24 item 4: a content import is a durable job whose batches move a checkpoint; a worker
// SIGKILLed in the middle resumes on the next one from the last checkpoint, and the batch it cut
// short finds its own writes done: every line imported once, no entry twice, one revision each.

const LINES = 6_000;

describe('content import: a worker SIGKILLed mid-import', { timeout: 600_000 }, () => {
  const crash = useContentCrashWorld();

  it('resumes on the next worker without doubles: each line once, the figures exact', async () => {
    const { cw } = crash;
    const ctx = await defaultSiteContext(cw.world);
    const { entries, revisions } = contentCollections(ctx.db);
    const body = Array.from({ length: LINES }, (_, i) => entryLine(i + 1)).join('\n');
    const started = await postImport(cw, body);
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json().id as string;
    const imported = () => entries.countDocuments({ siteId: ctx.site._id, slug: /^imported-/ });

    const first = await crash.spawnWorker();
    // Killed once at least one batch is checkpointed and before the last one.
    await eventually(
      async () => {
        const job = await importsCollection(ctx.db).findOne({ _id: id });
        return job && job.line >= 1_000 && job.line < LINES - 1_000 ? job : undefined;
      },
      'the import under way',
      240_000,
      20,
    );
    await kill9(first);
    const atKill = await imported();
    expect(atKill).toBeGreaterThanOrEqual(1_000);
    expect(atKill).toBeLessThan(LINES);

    await crash.spawnWorker();
    const done = await importFinished(cw, id, 400_000);
    expect(done).toMatchObject({ state: 'succeeded', linesRead: LINES, created: LINES, updated: 0, unchanged: 0, rejected: 0 });
    expect(await imported()).toBe(LINES);
    // No doubles: one entry per slug (the unique index says so too), each at version 1, its own revision (the import's note), no row.
    expect(await entries.countDocuments({ siteId: ctx.site._id, slug: /^imported-/, version: 1, changeNote: `import ${id}` })).toBe(LINES);
    expect(await revisions.countDocuments({ siteId: ctx.site._id })).toBe(0);
    const slugs = new Set((await entries.find({ siteId: ctx.site._id, slug: /^imported-/ }, { projection: { slug: 1 } }).toArray()).map((d) => d.slug));
    expect(slugs.size).toBe(LINES);
  });
});
