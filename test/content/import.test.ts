import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_COUNTS_ID, entryUsage, reconcileEntryCounts } from '../../services/content/entry-counts.ts';
import { SITE_STATE_COLLECTION } from '../../services/core/site-state.ts';
import { PLATFORM_KEY_CAPABILITIES } from '../platform/support.ts';
import { startContentWorld, defaultSiteContext, type ContentWorld } from './support.ts';
import { addLocalWorkspace } from '../support/world.ts';
import { createApiKey, siteContext } from '../support/access.ts';
import { checkHistory } from '../support/histories.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { contentCollections } from '../../services/content/model.ts';
import { IMPORT_FILE_KIND, importsCollection, LEGACY_IMPORT_FILES_BUCKET, type ImportDoc } from '../../services/content/import-model.ts';
import { MEDIA_BUCKET } from '../../services/media/model.ts';
import { newId } from '../../services/core/ids.ts';
import { GridFSBucket, type Db } from 'mongodb';
import { contentImportWorkflowId, contentImportWorkflowType } from '../../workflows/contracts/content-import.ts';
import { entryLine, importFinished, postImport } from './import-support.ts';

// Issue 24 item 4: bulk import (NDJSON, a durable job, idempotent by slug, validated line by line)
// and export (the same format, streamed); a round trip into an empty workspace loses nothing.

const LINES = 10_000;
const BAD = new Map<number, string>([
  [10, '{"type":"post","slug":"broken-10",'],
  [5_000, JSON.stringify({ type: 'no-such-type', slug: 'bad-type', title: 'Bad type' })],
  [9_999, JSON.stringify({ type: 'post', slug: 'bad-status', title: 'Bad status', status: 'maybe' })],
]);

/** The test file: a header, then LINES entry lines of which 3 are bad (line numbers count the header). */
function file(change: (i: number) => Record<string, unknown> = () => ({})): string {
  const lines = [JSON.stringify({ format: 'content-ndjson', version: 1 })];
  for (let no = 2; no <= LINES + 1; no++) lines.push(BAD.get(no) ?? entryLine(no, change(no)));
  return `${lines.join('\n')}\n`;
}

/** Import files in the bucket they share with the media library (services/content/import-model.ts). */
const importFileCount = (db: Db) => db.collection(`${MEDIA_BUCKET}.files`).countDocuments({ 'metadata.kind': IMPORT_FILE_KIND });

describe('content import and export', { timeout: 600_000 }, () => {
  let cw: ContentWorld;
  beforeAll(async () => {
    cw = await startContentWorld({ worker: true });
  }, 120_000);
  afterAll(async () => {
    await cw?.close();
  }, 120_000);

  it(`imports ${LINES} lines with 3 bad ones: ${LINES - 3} imported, the 3 reported; a re-run changes nothing`, async () => {
    const ctx = await defaultSiteContext(cw.world);
    const { entries, revisions } = contentCollections(ctx.db);
    const body = file();
    const started = await postImport(cw, body);
    expect(started.statusCode, started.body).toBe(202);
    const first = await importFinished(cw, started.json().id);
    expect(first).toMatchObject({ state: 'succeeded', linesRead: LINES + 1, imported: LINES - 3, created: LINES - 3, updated: 0, unchanged: 0, rejected: 3 });
    expect(first.rejections).toEqual([
      { line: 10, error: 'malformed JSON' },
      { line: 5_000, error: 'type: unknown content type "no-such-type"' },
      { line: 9_999, error: expect.stringMatching(/^status: /) },
    ]);
    const imported = { siteId: ctx.site._id, slug: /^imported-/ };
    expect(await entries.countDocuments(imported)).toBe(LINES - 3);
    expect(await entries.countDocuments({ ...imported, version: 1, pending: null })).toBe(LINES - 3);
    // Each entry's state is its own revision, with the import's note: no revision row.
    expect(await entries.countDocuments({ ...imported, changeNote: `import ${first.id}` })).toBe(LINES - 3);
    expect(
      await revisions.countDocuments({ siteId: ctx.site._id, entryId: { $in: (await entries.find(imported).limit(50).toArray()).map((doc) => doc._id) } }),
    ).toBe(0);
    // Terms by slug: created once, nested under their parent.
    const tags = await cw.manage('GET', '/taxonomies/tag/terms?limit=100');
    expect(
      tags
        .json()
        .data.map((t: { slug: string }) => t.slug)
        .sort(),
    ).toEqual(['t0', 't1', 't2', 't3', 't4']);
    const categories = (await cw.manage('GET', '/taxonomies/category/terms?limit=100')).json().data as Array<{
      id: string;
      slug: string;
      parentId: string | null;
    }>;
    const root = categories.find((c) => c.slug === 'root')!;
    expect(
      categories
        .filter((c) => c.parentId === root.id)
        .map((c) => c.slug)
        .sort(),
    ).toEqual(['c0', 'c1', 'c2', 'c3']);
    // Published lines are public at once; drafts are not.
    expect((await cw.pub('/content/imported-3')).statusCode).toBe(200);
    expect((await cw.pub('/content/imported-4')).statusCode).toBe(404);
    // The usage figure holds the batch (under no limit a create is found by it, not counted: content/entry-counts.ts).
    expect(await entryUsage(ctx.db, ctx.site._id)).toBeGreaterThanOrEqual(LINES - 3);
    // The file is dropped once the import is over; the report stays.
    expect(await ctx.db.collection(`${MEDIA_BUCKET}.files`).countDocuments({ _id: first.id as never })).toBe(0);
    await checkHistory(
      cw.world.services.temporal.client.workflow.getHandle(contentImportWorkflowId(cw.world.defaultWorkspace.id, ctx.site._id, String(first.id))),
      'content-import',
    );

    const events = cw.events.length;
    const again = await postImport(cw, body);
    const second = await importFinished(cw, again.json().id);
    expect(second).toMatchObject({ state: 'succeeded', imported: 0, created: 0, updated: 0, unchanged: LINES - 3, rejected: 3 });
    expect(await entries.countDocuments({ ...imported, version: 1 })).toBe(LINES - 3);
    expect(await entries.countDocuments({ siteId: ctx.site._id, changeNote: `import ${second.id}` })).toBe(0);
    expect(cw.events.length).toBe(events);

    // A changed line changes its entry only: version 2, one revision, content.updated.
    const changed = await postImport(
      cw,
      file((no) => (no === 42 ? { title: 'Renamed 42' } : {})),
    );
    const third = await importFinished(cw, changed.json().id);
    expect(third).toMatchObject({ state: 'succeeded', created: 0, updated: 1, unchanged: LINES - 4, rejected: 3 });
    const renamed = await entries.findOne({ siteId: ctx.site._id, slug: 'imported-42' });
    expect(renamed).toMatchObject({ title: 'Renamed 42', version: 2 });
    expect(cw.events.slice(events).map((e) => e.event)).toEqual(['content.updated']);
  });

  it('refuses bad inputs with a clear { error } and writes nothing', async () => {
    const ctx = await defaultSiteContext(cw.world);
    const before = {
      imports: await importsCollection(ctx.db).countDocuments(),
      files: await importFileCount(ctx.db),
      entries: await contentCollections(ctx.db).entries.countDocuments(),
    };
    const json = await cw.manage('POST', '/content/import', { title: 'x' });
    expect(json.statusCode).toBe(415);
    expect(json.json().error).toMatch(/application\/x-ndjson/);
    const empty = await postImport(cw, '\n\n');
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toMatch(/no lines/);
    const header = await postImport(cw, `${JSON.stringify({ format: 'content-ndjson', version: 2 })}\n${entryLine(1)}\n`);
    expect(header.statusCode).toBe(400);
    expect(header.json().error).toMatch(/^line 1: header version/);
    const anonymous = await cw.world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/content/import',
      payload: entryLine(1),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error: 'Unauthorized' });
    const reader = await cw.keyWith(['content:read']);
    const forbidden = await cw.manage('POST', '/content/import', entryLine(1), reader, { 'content-type': 'application/x-ndjson' });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ error: 'Forbidden' });
    expect((await cw.manage('GET', '/content/imports/nope')).statusCode).toBe(404);
    expect((await cw.manage('POST', '/content/imports/nope/cancel')).statusCode).toBe(404);
    expect({
      imports: await importsCollection(ctx.db).countDocuments(),
      files: await importFileCount(ctx.db),
      entries: await contentCollections(ctx.db).entries.countDocuments(),
    }).toEqual(before);
  });

  it("refuses the lines outside the importing key's scope, and a finished import cannot be cancelled", async () => {
    const scoped = await cw.keyWith([...CAPABILITIES], { types: ['page'] });
    const body = [
      JSON.stringify({ type: 'page', slug: 'scoped-page', title: 'Scoped page' }),
      JSON.stringify({ type: 'post', slug: 'scoped-post', title: 'Scoped post' }),
    ].join('\n');
    const started = await cw.manage('POST', '/content/import', body, scoped, { 'content-type': 'application/x-ndjson' });
    expect(started.statusCode, started.body).toBe(202);
    const done = await importFinished(cw, started.json().id);
    expect(done).toMatchObject({ state: 'succeeded', created: 1, rejected: 1, rejections: [{ line: 2, error: "outside the importing key's scope" }] });
    const cancel = await cw.manage('POST', `/content/imports/${done.id}/cancel`);
    expect(cancel.statusCode).toBe(409);
  });

  it('takes the entries quota across the parts of a batch: the lines past the limit are refused, the counters hold what landed', async () => {
    const ctx = await defaultSiteContext(cw.world);
    const { entries } = contentCollections(ctx.db);
    const live = () => entries.countDocuments({ siteId: ctx.site._id, trashedAt: null });
    const operatorKey = (await createApiKey(cw.world, { capabilities: PLATFORM_KEY_CAPABILITIES })).key;
    const setQuota = (quota: number | null) =>
      cw.world.app.inject({
        method: 'PUT',
        url: `/api/manage/v1/sites/${ctx.site._id}/quotas`,
        headers: { authorization: `Bearer ${operatorKey}` },
        payload: { quotas: { entries: quota } },
      });
    const before = await live();
    // Room for 620: the batch's first two parts of 250 land whole, the third in part, the fourth not at all.
    expect((await setQuota(before + 620)).statusCode).toBe(200);
    try {
      const lines = Array.from({ length: 900 }, (_, i) => JSON.stringify({ type: 'page', slug: `quota-${i}`, title: `Quota ${i}` }));
      const done = await importFinished(cw, (await postImport(cw, lines.join('\n'))).json().id);
      expect(done).toMatchObject({ state: 'succeeded', created: 620, rejected: 280 });
      expect((done.rejections as Array<{ error: string }>).every((r) => r.error === 'over the entries quota')).toBe(true);
      expect(await live()).toBe(before + 620);
      // The kept counters say what the collection holds (a recount finds the same): a create over the limit is refused.
      const kept = await ctx.db.collection<{ _id: string; sites: Record<string, number> }>(SITE_STATE_COLLECTION).findOne({ _id: ENTRY_COUNTS_ID });
      expect(kept?.sites[ctx.site._id]).toBe(before + 620);
      expect((await reconcileEntryCounts(ctx.db)).sites[ctx.site._id]).toBe(before + 620);
      expect((await cw.manage('POST', '/content', { title: 'One too many' })).statusCode).toBe(403);
    } finally {
      await setQuota(null);
    }
  });

  it('cancels an import between batches: the batches done stay, nothing after', async () => {
    const lines = Array.from({ length: 6_000 }, (_, i) => JSON.stringify({ type: 'page', slug: `cancel-${i}`, title: `Cancel ${i}` }));
    const started = await postImport(cw, lines.join('\n'));
    const cancel = await cw.manage('POST', `/content/imports/${started.json().id}/cancel`);
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(cancel.json().cancelRequested).toBe(true);
    const done = await importFinished(cw, started.json().id);
    expect(done.state).toBe('cancelled');
    const ctx = await defaultSiteContext(cw.world);
    const landed = await contentCollections(ctx.db).entries.countDocuments({ siteId: ctx.site._id, slug: /^cancel-/ });
    expect(landed).toBe(done.created);
    expect(landed).toBeLessThan(6_000);
  });

  it('export → import into an empty workspace loses nothing (entries, terms, media references)', async () => {
    // A published entry whose working copy moved on, with a media reference and a nested term.
    const source = await cw.create({
      title: 'Round trip',
      slug: 'round-trip',
      excerpt: 'First',
      blocks: { version: 1, blocks: [{ type: 'image', mediaId: 'm-123' }] },
    });
    const category = (await cw.manage('POST', '/taxonomies/category/terms', { name: 'Parent cat', termSlug: 'parent-cat' })).json();
    const child = (await cw.manage('POST', '/taxonomies/category/terms', { name: 'Child cat', termSlug: 'child-cat', parentId: category.id })).json();
    expect((await cw.manage('PUT', `/content/${source.id}/terms`, { terms: { category: [child.id] } })).statusCode).toBe(200);
    expect((await cw.manage('POST', `/content/${source.id}/publish`)).statusCode).toBe(200);
    expect((await cw.manage('PATCH', `/content/${source.id}`, { excerpt: 'Working copy' })).statusCode).toBe(200);
    expect((await cw.manage('PUT', `/content/${source.id}/header-ref`, { headerRef: { mode: 'none' } })).statusCode).toBe(200);

    const exported = await cw.manage('GET', '/content/export');
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = exported.body.trimEnd().split('\n');
    expect(JSON.parse(lines[0])).toEqual({ format: 'content-ndjson', version: 1 });
    const ctx = await defaultSiteContext(cw.world);
    expect(lines.length - 1).toBe(await contentCollections(ctx.db).entries.countDocuments({ siteId: ctx.site._id, trashedAt: null }));
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.slug === 'round-trip');
    expect(line).toMatchObject({
      excerpt: 'Working copy',
      live: { excerpt: 'First' },
      status: 'published',
      headerRef: { mode: 'none' },
      media: ['m-123'],
      terms: { category: [{ slug: 'child-cat', name: 'Child cat', parents: [{ slug: 'parent-cat', name: 'Parent cat' }] }] },
    });

    const host = 'import-target.test';
    await addLocalWorkspace(cw.world, host, { email: 'owner@import-target.test', password: 'correct-horse-battery-9' });
    const key = (await createApiKey(cw.world, { capabilities: [...CAPABILITIES], host, ownerEmail: 'owner@import-target.test' })).key;
    const target = (method: string, url: string, payload?: string) =>
      cw.world.app.inject({
        method: method as 'GET',
        url: `/api/manage/v1${url}`,
        headers: { host, authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
        ...(payload !== undefined ? { payload } : {}),
      });
    const started = await target('POST', '/content/import', exported.body);
    expect(started.statusCode, started.body).toBe(202);
    const done = await (async () => {
      for (;;) {
        const view = (await target('GET', `/content/imports/${started.json().id}`)).json();
        if (view.state !== 'queued' && view.state !== 'running') return view;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    // Scheduled entries aside (none here), every line lands.
    expect(done).toMatchObject({ state: 'succeeded', rejected: 0, created: lines.length - 1 });
    const back = (await target('GET', '/content/export')).body.trimEnd().split('\n');
    // The same lines but `updatedAt` (an import is a write). Compared by identity, not order: entries
    // created in the same millisecond keep their createdAt but not their order between themselves.
    const byKey = (texts: string[]) =>
      new Map(
        texts.slice(1).map((text) => {
          const { updatedAt: _u, ...rest } = JSON.parse(text);
          return [`${rest.locale}/${rest.slug}`, JSON.stringify(rest)];
        }),
      );
    const [before, after] = [byKey(lines), byKey(back)];
    expect(back[0]).toBe(lines[0]);
    expect(after.size).toBe(before.size);
    expect([...before].filter(([key, text]) => after.get(key) !== text).map(([key]) => key)).toEqual([]);
    expect(after.get('en/round-trip')).toBe(before.get('en/round-trip'));
    const targetCtx = await siteContext(cw.world, host);
    expect(await targetCtx.db.collection('content_entries').countDocuments({ siteId: targetCtx.site._id, changeNote: /^import / })).toBe(lines.length - 1);
  });
  it('an import started before the shared bucket finds its file in the bucket it was stored in, and drops it when done', async () => {
    const ctx = await defaultSiteContext(cw.world);
    const id = newId();
    const body = Buffer.from(`${entryLine(70_001)}\n${entryLine(70_002)}\n`);
    const legacy = new GridFSBucket(ctx.db, { bucketName: LEGACY_IMPORT_FILES_BUCKET });
    await new Promise<void>((resolve, reject) =>
      legacy
        .openUploadStream(id, { id: id as never })
        .once('error', reject)
        .end(body, () => resolve()),
    );
    const now = new Date();
    // The row as the release before wrote it: no `fileBucket`.
    const doc: ImportDoc = {
      _id: id,
      siteId: ctx.site._id,
      state: 'queued',
      fileId: id,
      bytes: body.length,
      offset: 0,
      line: 0,
      inFlight: null,
      linesRead: 0,
      created: 0,
      updated: 0,
      unchanged: 0,
      rejected: 0,
      rejections: [],
      cancelRequested: false,
      error: null,
      authorId: null,
      keyScope: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    };
    await importsCollection(ctx.db).insertOne(doc);
    await cw.world.services.temporal.client.workflow.start(contentImportWorkflowType, {
      taskQueue: cw.world.services.temporal.taskQueue,
      workflowId: contentImportWorkflowId(cw.world.defaultWorkspace.id, ctx.site._id, id),
      args: [{ workspaceId: cw.world.defaultWorkspace.id, siteId: ctx.site._id, importId: id, batch: 1000 }],
    });
    expect(await importFinished(cw, id)).toMatchObject({ state: 'succeeded', created: 2, rejected: 0 });
    expect(await ctx.db.collection(`${LEGACY_IMPORT_FILES_BUCKET}.files`).countDocuments({ _id: id as never })).toBe(0);
  });
});
