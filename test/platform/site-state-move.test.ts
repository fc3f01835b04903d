import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, type Db, type Document } from 'mongodb';
import { startWorld, addLocalWorkspace, type World } from '../support/world.ts';
import { createSiteStateMoves, moveLegacySiteState, SITE_STATE_COLLECTION, SITE_STATE_KINDS, type SiteStateKind } from '../../services/core/site-state.ts';
import { upgradeWorkspaceIndexes } from '../../services/platform/provisioning.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { workspaceIndexVersion } from '../../services/tenancy/index-version.ts';
import { readAccessState } from '../../services/access/site-settings-store.ts';
import { storedGeneration } from '../../services/core/public-generation.ts';
import { counterValue, rpmCounterId } from '../../services/tenancy/quota-guard.ts';
import { retentionFreed } from '../../services/platform/retention.ts';
import { cloneRewrite } from '../../services/platform/backup/clone-fixups.ts';
import { siteRuns } from '../../services/export/model.ts';

/**
 * Issue 24 (a lean footprint): the small state documents that had a collection each now share
 * `site_state`. A workspace made by an earlier release still holds the old collections: the
 * workspace actor's upgrade step moves them (nothing lost, idempotent, resumable), and until it
 * has, the first use of `site_state` in a process moves them first.
 */
const LEGACY = Object.entries(SITE_STATE_KINDS) as Array<[SiteStateKind, string]>;
const kindOf = (name: string) => LEGACY.find(([, legacy]) => legacy === name)![0];
const names = async (db: Db) => (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
const legacyLeft = async (db: Db) => (await names(db)).filter((name) => LEGACY.some(([, legacy]) => legacy === name));

/** What the old layout held for one site: one document per collection, as the earlier release wrote them. */
function legacyDocuments(siteId: string): Record<string, Document[]> {
  const at = new Date('2026-11-01T10:00:00Z');
  return {
    site_settings: [
      {
        _id: siteId,
        siteId,
        values: { api: { publicEnabled: true }, custom: { kept: 'yes' } },
        apiKeys: { enabled: true, defaultRateLimitPerMin: 77, allowedOrigins: ['https://a.example.test'] },
        accessVersion: 41,
        updatedAt: at,
      },
    ],
    site_languages: [
      {
        _id: siteId,
        siteId,
        languages: [
          { code: 'en', name: 'English', active: true },
          { code: 'fr', name: 'Français', active: true },
        ],
        defaultCode: 'fr',
        version: 3,
      },
    ],
    site_cookies: [{ _id: siteId, siteId, cookies: [{ name: 'c', provider: 'p', category: 'analytics', purpose: 'x', duration: '1 day' }], updatedAt: at }],
    site_theme: [{ _id: siteId, siteId, themeId: 'default', activatedAt: at, installed: [] }],
    content_state: [{ _id: siteId, siteId, generation: 57 }],
    entry_counts: [{ _id: 'entries', total: 5, sites: { [siteId]: 5 }, trashed: 1, reconciledAt: at }],
    media_usage: [
      { _id: `site:${siteId}`, siteId, bytes: 1234 },
      { _id: 'workspace', siteId: null, bytes: 1234 },
    ],
    quota_counters: [
      { _id: `rpm:${Math.floor(Date.now() / 60_000) * 60_000}`, n: 9, expiresAt: new Date(Date.now() + 60_000) },
      { _id: 'retention', freed: { audit: 12 }, lastFreedAt: at, resume: {} },
    ],
    export_state: [{ _id: siteId, siteId, status: 'idle', generation: 2, current: null, lastRun: null, output: { files: 3, bytes: 30 }, updatedAt: at }],
    quota_locks: [{ _id: 'users', holder: 'old-holder', until: at }],
    export_runs: [
      { _id: `${siteId}:run-1`, siteId, runId: 'run-1', mode: 'full', status: 'succeeded', finishedAt: at },
      { _id: `${siteId}:run-2`, siteId, runId: 'run-2', mode: 'incremental', status: 'succeeded', finishedAt: new Date(at.getTime() + 1000) },
    ],
  };
}

/** Turns a database of this release back into the earlier layout: `site_state` emptied, `docs` in their old collections. */
async function toLegacyLayout(db: Db, docs: Record<string, Document[]>): Promise<void> {
  await db.collection(SITE_STATE_COLLECTION).deleteMany({});
  for (const [name, list] of Object.entries(docs)) await db.collection(name).insertMany(list);
}

/** Every legacy document must be in `site_state` under `<kind>:<old _id>`, every other field as it was. */
async function expectMoved(db: Db, docs: Record<string, Document[]>): Promise<void> {
  for (const [name, list] of Object.entries(docs)) {
    for (const { _id, ...rest } of list) {
      const moved = await db.collection<{ _id: string }>(SITE_STATE_COLLECTION).findOne({ _id: `${kindOf(name)}:${String(_id)}` });
      expect(moved, `${name} ${String(_id)}`).toEqual({ _id: `${kindOf(name)}:${String(_id)}`, ...rest });
    }
  }
}

describe('a workspace of the earlier layout, upgraded by its actor', { timeout: 120_000 }, () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  }, 120_000);
  afterAll(() => world?.close());

  it('moves every document into site_state, drops the old collections, and the features read what was there', async () => {
    const tenant = await addLocalWorkspace(world, 'legacy-layout.test', { email: 'admin@legacy-layout.test', password: 'legacy-password-123' });
    const { workspaces } = platformCollections(world.services);
    const row = (await workspaces.findOne({ _id: tenant.workspaceId }))!;
    const raw = world.services.mongo.db(row.dbName);
    const docs = legacyDocuments(tenant.siteId);
    await toLegacyLayout(raw, docs);
    await workspaces.updateOne({ _id: tenant.workspaceId }, { $set: { indexVersion: 'before-site-state' } });

    await upgradeWorkspaceIndexes(world.services, tenant.workspaceId);

    expect(await legacyLeft(raw)).toEqual([]);
    await expectMoved(raw, docs);
    expect((await workspaces.findOne({ _id: tenant.workspaceId }))?.indexVersion).toBe(workspaceIndexVersion(world.services.features));
    // The features find their documents where they now look.
    const db = world.services.workspaceDb(row);
    const access = await readAccessState(db, tenant.siteId);
    expect(access.version).toBe(41);
    expect(access.keys.defaultRateLimitPerMin).toBe(77);
    expect(await storedGeneration(db, tenant.siteId)).toBe(57);
    expect(await counterValue(db, rpmCounterId(Math.floor(Date.now() / 60_000) * 60_000))).toBe(9);
    expect((await retentionFreed(db)).freed.audit).toBe(12);
    expect((await siteRuns(db, tenant.siteId)).map((run) => run.runId)).toEqual(['run-2', 'run-1']);

    // Idempotent: nothing left to move, and the step itself is done for this version.
    expect(await moveLegacySiteState(raw)).toEqual({ moved: 0, dropped: [] });
    await upgradeWorkspaceIndexes(world.services, tenant.workspaceId);
    await expectMoved(raw, docs);
  });

  it('a clone leaves the quota windows, retention state and leases behind, and takes the rest to its new site', () => {
    const rewrite = cloneRewrite(world.services, SITE_STATE_COLLECTION, new Map([['site-d', 'site-e']]), new Date());
    expect(rewrite({ _id: 'quota:rpm:1', n: 3 })).toBeNull();
    expect(rewrite({ _id: 'quota:retention', freed: {} })).toBeNull();
    expect(rewrite({ _id: 'lock:users', holder: 'h' })).toBeNull();
    expect(rewrite({ _id: 'settings:site-d', siteId: 'site-d', accessVersion: 2 })).toEqual({ _id: 'settings:site-e', siteId: 'site-e', accessVersion: 2 });
  });
});

describe('the move itself', () => {
  let client: MongoClient;
  let raw: Db;
  beforeAll(async () => {
    client = await new MongoClient(process.env.MONGODB_URI!).connect();
    raw = client.db(`t${randomBytes(4).toString('hex')}_site_state`);
  });
  afterAll(async () => {
    await raw?.dropDatabase();
    await client?.close();
  });

  it('resumes a move cut short: what was moved and changed since stays, the rest moves, the old collections go', async () => {
    const docs = legacyDocuments('site-a');
    await toLegacyLayout(raw, docs);
    // A move killed after copying the settings (not yet dropped), then a write to the moved document.
    await raw.collection(SITE_STATE_COLLECTION).insertOne({ ...docs.site_settings[0], _id: 'settings:site-a' as never, accessVersion: 42 });

    const { dropped } = await moveLegacySiteState(raw);
    expect(dropped.sort()).toEqual(Object.keys(docs).sort());
    expect(await legacyLeft(raw)).toEqual([]);
    const { site_settings: _settings, ...others } = docs;
    await expectMoved(raw, others);
    expect((await raw.collection(SITE_STATE_COLLECTION).findOne({ _id: 'settings:site-a' as never }))?.accessVersion).toBe(42);
  });

  it('a restored archive of the earlier layout wins over what site_state held', async () => {
    await raw.collection(SITE_STATE_COLLECTION).deleteMany({});
    await raw.collection(SITE_STATE_COLLECTION).insertOne({ _id: 'content:site-b' as never, siteId: 'site-b', generation: 900 });
    await raw.collection('content_state').insertOne({ _id: 'site-b' as never, siteId: 'site-b', generation: 3 });
    await moveLegacySiteState(raw, 'replaced');
    expect(await raw.collection(SITE_STATE_COLLECTION).findOne({ _id: 'content:site-b' as never })).toEqual({
      _id: 'content:site-b',
      siteId: 'site-b',
      generation: 3,
    });
  });

  it('before the upgrade step, the first use of site_state in a process moves the old collections first (once)', async () => {
    await raw.collection(SITE_STATE_COLLECTION).deleteMany({});
    const docs = legacyDocuments('site-c');
    await toLegacyLayout(raw, docs);
    const db = createSiteStateMoves().wrap(raw);
    const state = db.collection<{ _id: string; generation?: number; accessVersion?: number }>(SITE_STATE_COLLECTION);
    // Two first uses at once: both see the moved documents.
    const [content, settings] = await Promise.all([state.findOne({ _id: 'content:site-c' }), state.findOne({ _id: 'settings:site-c' })]);
    expect(content?.generation).toBe(57);
    expect(settings?.accessVersion).toBe(41);
    expect(await legacyLeft(raw)).toEqual([]);
    await expectMoved(raw, docs);
  });
});
