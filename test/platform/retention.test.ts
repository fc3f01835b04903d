import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { defaultSiteContext } from '../support/access.ts';
import { pinnedClock } from '../access/clock.ts';
import { multipartBody, pngImage } from '../media/support.ts';
import { caller, operatorKey, type Call } from './support.ts';
import { newId } from '../../services/core/ids.ts';
import { contentCollections, type RevisionDoc } from '../../services/content/model.ts';
import { eventCollections, type AttemptDoc, type DeliveryDoc } from '../../services/events/model.ts';
import { searchTerms } from '../../services/content/search-index.ts';
import { ENTRY_COUNTS_ID } from '../../services/content/entry-counts.ts';
import { SITE_STATE_COLLECTION } from '../../services/core/site-state.ts';
import { runRetentionPass } from '../../services/platform/retention.ts';
import { RETENTION_DEFAULTS } from '../../services/tenancy/retention-model.ts';

const DAY = 24 * 60 * 60_000;

/**
 * Retention (docs/platform.md, "Retention"): the pass removes exactly what the workspace's rules
 * say is due, through the same paths as a person would (the trash's purge), bounded per pass.
 * The world runs no worker: each pass here is the one the test runs, at the test clock's time.
 */
describe('retention', () => {
  const clock = pinnedClock();
  const t0 = clock.now().getTime();
  let world: World;
  let key: string;
  let call: Call;
  let tenantId: string;
  let siteId: string;
  const db = () => world.services.workspaceDb(world.defaultWorkspace);
  const setRetention = (retention: unknown) => call('PUT', `/tenants/${tenantId}/quotas`, { quotas: { retention } });
  const versionsOf = async (entryId: string) =>
    (await contentCollections(db()).revisions.find({ siteId, entryId }).toArray()).map((r) => r.version).sort((a, b) => a - b);

  beforeAll(async () => {
    world = await startWorld({ clock, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    key = await operatorKey(world);
    call = caller(world, () => key);
    tenantId = world.defaultWorkspace.id;
    siteId = (await defaultSiteContext(world)).site._id;
  });
  afterAll(() => world?.close());

  it('refuses bad settings (400) and changes nothing; absent names take the defaults', async () => {
    expect((await setRetention({ trashDays: 12 })).statusCode).toBe(200);
    const before = (await call('GET', `/tenants/${tenantId}/quotas`)).json();
    for (const bad of [
      { trashDays: 0 },
      { trashDays: 3651 },
      { deliveryHistoryDays: 1.5 },
      { revisionsKept: 0 },
      { revisionsKept: '5' },
      { revisionsDays: -1 },
      { revisionsDays: null },
      { auditDays: 30 },
      { trashdays: 5 },
    ]) {
      const res = await setRetention(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error).toMatch(/retention/);
    }
    // Workspace-only: a site cannot set it.
    expect((await call('PUT', `/sites/${siteId}/quotas`, { quotas: { retention: { trashDays: 5 } } })).statusCode).toBe(400);
    expect((await call('GET', `/tenants/${tenantId}/quotas`)).json()).toEqual(before);
    const usage = (await call('GET', `/tenants/${tenantId}/usage`)).json();
    expect(usage.retention.rules).toEqual({ ...RETENTION_DEFAULTS, trashDays: 12, auditDays: 90 });
    // The site's usage shows its workspace's retention.
    expect((await call('GET', `/sites/${siteId}/usage`)).json().retention.rules).toEqual(usage.retention.rules);
  });

  it('one pass removes exactly what is due: delivery history, old revisions (never the current or published one), the old trash', async () => {
    expect((await setRetention({ deliveryHistoryDays: 7, revisionsKept: 3, revisionsDays: 10, trashDays: 5 })).statusCode).toBe(200);
    const ok = async (method: string, url: string, payload?: unknown) => {
      const res = await call(method, url, payload);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res.json();
    };

    // Day 0: an entry published at v2 then edited up to v6; another trashed; a media file trashed.
    const kept = await ok('POST', '/content', { title: 'one', slug: 'kept-entry' });
    await ok('PATCH', `/content/${kept.id}`, { title: 'two', status: 'published' });
    for (const title of ['three', 'four', 'five', 'six']) await ok('PATCH', `/content/${kept.id}`, { title });
    const oldTrash = await ok('POST', '/content', { title: 'Searchable oldtrash words', slug: 'old-trash' });
    await ok('DELETE', `/content/${oldTrash.id}`);
    const file = multipartBody('old.png', await pngImage(), 'image/png');
    const media = await world.app.inject({
      method: 'POST',
      url: '/api/manage/v1/media',
      payload: file.payload,
      headers: { authorization: `Bearer ${key}`, ...file.headers },
    });
    expect(media.statusCode, media.body).toBe(201);
    await ok('DELETE', `/media/${media.json().id}`);
    const mediaBytesBefore = (await call('GET', `/tenants/${tenantId}/usage`)).json().quotas.mediaBytes.used;
    expect(mediaBytesBefore).toBeGreaterThan(0);

    // Delivery history: finished on day 0 (due), pending since day 0 (never due), finished on day 18 (kept).
    const { deliveries, attempts, attemptBatches } = eventCollections(db());
    const delivery = (id: string, status: DeliveryDoc['status'], at: number, finished: boolean): DeliveryDoc => ({
      _id: id,
      siteId,
      endpointId: 'retention-endpoint',
      event: 'content.updated',
      body: '{}',
      status,
      attempts: 1,
      responseCode: 200,
      error: null,
      redeliveryOf: null,
      createdAt: new Date(at),
      updatedAt: new Date(at),
      finishedAt: finished ? new Date(at) : null,
      via: 'endpoint',
    });
    await deliveries.insertMany([
      delivery('d-old', 'delivered', t0, true),
      delivery('d-pending', 'pending', t0, false),
      delivery('d-recent', 'failed', t0 + 18 * DAY, true),
    ]);
    const attempt = (at: number, deliveryId: string): AttemptDoc => ({
      _id: newId(at),
      siteId,
      deliveryId,
      endpointId: 'retention-endpoint',
      event: 'content.updated',
      attempt: 1,
      status: 'succeeded',
      responseCode: 200,
      error: null,
      startedAt: new Date(at),
      finishedAt: new Date(at),
      durationMs: 1,
    });
    const oldAttempt = attempt(t0, 'd-old');
    const recentAttempt = attempt(t0 + 18 * DAY, 'd-recent');
    await attempts.insertMany([oldAttempt, recentAttempt]);
    const batch = (at: number) => ({ _id: newId(at), siteId, endpointId: 'retention-endpoint', batch: newId(at), attempts: [] });
    const oldBatch = batch(t0);
    const recentBatch = batch(t0 + 18 * DAY);
    await attemptBatches.insertMany([oldBatch, recentBatch]);

    // Day 15: an entry whose every revision is recent; day 18: a trashed entry not due yet; day 20: the kept entry's v7.
    clock.advance(15 * DAY);
    const recent = await ok('POST', '/content', { title: 'recent 1', slug: 'recent-entry' });
    for (let i = 2; i <= 6; i++) await ok('PATCH', `/content/${recent.id}`, { title: `recent ${i}` });
    clock.advance(3 * DAY);
    const newTrash = await ok('POST', '/content', { title: 'newtrash', slug: 'new-trash' });
    await ok('DELETE', `/content/${newTrash.id}`);
    clock.advance(2 * DAY);
    await ok('PATCH', `/content/${kept.id}`, { title: 'seven' });

    const counts = async () => (await db().collection<{ _id: string; trashed: number }>(SITE_STATE_COLLECTION).findOne({ _id: ENTRY_COUNTS_ID }))?.trashed;
    const trashedBefore = await counts();
    const metricBefore = retentionMetric('revisions');

    const removed = await runRetentionPass(world.services);
    expect(removed).toMatchObject({ deliveries: 1, attempts: 2, revisions: 3, trash: 2 });

    // Revisions: the last 3 (v5, v6 and v7, the current state: the entry itself, no row), the
    // published one (v2); v1, v3, v4 went. The recent entry keeps all six (v6 its current state).
    expect(await versionsOf(kept.id)).toEqual([2, 5, 6]);
    expect(await versionsOf(recent.id)).toEqual([1, 2, 3, 4, 5]);
    const published = await world.app.inject({ method: 'GET', url: '/api/v1/content/kept-entry' });
    expect(published.statusCode).toBe(200);
    expect(published.json().title).toBe('two');

    // The trash: the old entry purged as a manual purge would (no entry, revisions, search posting;
    // one trashed fewer in the counters), the old media purged (its bytes leave the usage); the recent one stays.
    const { entries } = contentCollections(db());
    expect(await entries.findOne({ _id: oldTrash.id })).toBeNull();
    expect(await versionsOf(oldTrash.id)).toEqual([]);
    expect(await searchTerms(db()).countDocuments({ siteId, entryId: oldTrash.id })).toBe(0);
    expect(await counts()).toBe((trashedBefore ?? 0) - 1);
    expect(await entries.findOne({ _id: newTrash.id })).not.toBeNull();
    const trash = (await call('GET', '/trash')).json().data.map((item: { id: string }) => item.id);
    expect(trash).toEqual([newTrash.id]);
    const usage = (await call('GET', `/tenants/${tenantId}/usage`)).json();
    expect(usage.quotas.mediaBytes.used).toBe(0);

    // Delivery history: the old finished delivery and the old attempt row and batch went; the rest stays.
    expect((await deliveries.find({ siteId }).toArray()).map((d) => d._id).sort()).toEqual(['d-pending', 'd-recent']);
    expect((await attempts.find({ siteId }).toArray()).map((a) => a._id)).toEqual([recentAttempt._id]);
    expect((await attemptBatches.find({ siteId }).toArray()).map((b) => b._id)).toEqual([recentBatch._id]);

    // Usage and metrics say what was freed.
    expect(usage.retention.freed).toMatchObject({ deliveries: 1, attempts: 2, revisions: 3, trash: 2 });
    expect(usage.retention.lastFreedAt).toBe(clock.now().toISOString());
    expect(retentionMetric('revisions') - metricBefore).toBe(3);

    // Nothing more is due: a second pass removes nothing and the figures stay.
    expect(await runRetentionPass(world.services)).toMatchObject({ deliveries: 0, attempts: 0, revisions: 0, trash: 0 });
    expect((await call('GET', `/tenants/${tenantId}/usage`)).json().retention.freed).toEqual(usage.retention.freed);
  });

  it('more due rows than the per-pass bound: each pass removes at most the bound, and the passes finish the work', async () => {
    expect((await setRetention({ deliveryHistoryDays: 7, revisionsKept: 3, revisionsDays: 10, trashDays: 5 })).statusCode).toBe(200);
    const old = clock.now().getTime() - 40 * DAY;
    const { deliveries } = eventCollections(db());
    await deliveries.insertMany(
      Array.from({ length: 25 }, (_, i) => ({
        _id: `bulk-delivery-${i}`,
        siteId,
        endpointId: 'retention-endpoint',
        event: 'content.updated',
        body: '{}',
        status: 'delivered' as const,
        attempts: 1,
        responseCode: 200,
        error: null,
        redeliveryOf: null,
        createdAt: new Date(old),
        updatedAt: new Date(old),
        finishedAt: new Date(old + i),
        via: 'endpoint' as const,
      })),
    );
    // An entry at v30 whose old revisions are all in the scanned range: the last three stay (and
    // are read again by every scan), the 27 before them go, 10 read per pass.
    const entry = (await call('POST', '/content', { title: 'bulk', slug: 'bulk-entry' })).json();
    const stored = (await contentCollections(db()).entries.findOne({ _id: entry.id }))!;
    await contentCollections(db()).entries.updateOne({ _id: entry.id }, { $set: { version: 30 } });
    const revision = (version: number): RevisionDoc => ({
      _id: `${entry.id}:${version}`,
      siteId,
      entryId: entry.id,
      version,
      title: stored.title,
      slug: stored.slug,
      status: 'draft',
      excerpt: null,
      blocks: stored.blocks,
      fields: {},
      authorId: null,
      createdAt: new Date(old + version),
    });
    await contentCollections(db()).revisions.deleteMany({ siteId, entryId: entry.id });
    await contentCollections(db()).revisions.insertMany(Array.from({ length: 30 }, (_, i) => revision(i + 1)));

    const passes: Array<{ deliveries: number; revisions: number }> = [];
    for (let i = 0; i < 5; i++) {
      const { deliveries: d, revisions: r } = await runRetentionPass(world.services, { budget: 10 });
      passes.push({ deliveries: d, revisions: r });
    }
    expect(passes.map((p) => p.deliveries)).toEqual([10, 10, 5, 0, 0]);
    // 30 old revisions read 10 a pass: 10, 10, then 7 of the last 10 (three kept); then the scan starts over and finds nothing due.
    expect(passes.map((p) => p.revisions)).toEqual([10, 10, 7, 0, 0]);
    expect(await deliveries.countDocuments({ siteId, _id: { $in: Array.from({ length: 25 }, (_, i) => `bulk-delivery-${i}`) } })).toBe(0);
    expect(await versionsOf(entry.id)).toEqual([28, 29, 30]);
  });

  function retentionMetric(kind: string): number {
    return world.services.metrics.retentionRemoved.get().values.find((v) => v.labels.kind === kind)?.value ?? 0;
  }
});
