import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient, type Db, type Document } from 'mongodb';
import { startWorld, addLocalWorkspace, type World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import {
  createSiteConfigViews,
  moveLegacySiteConfig,
  SITE_CONFIG_COLLECTION,
  SITE_CONFIG_INDEXES,
  SITE_CONFIG_KINDS,
  unviewed,
} from '../../services/core/site-config.ts';
import { upgradeWorkspaceIndexes } from '../../services/platform/provisioning.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';
import { workspaceIndexVersion } from '../../services/tenancy/index-version.ts';
import { cloneRewrite } from '../../services/platform/backup/clone-fixups.ts';
import { BUILTIN_TEMPLATES } from '../../services/email-templates/email-templates.ts';
import { builtinPlugins } from '../../services/plugins/builtin/index.ts';
import { catalogPlugins } from '../../services/plugins/catalog/index.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { indexDescriptions } from '../../services/core/first-write.ts';

/**
 * Issue 24 (a lean footprint): the hand-made configuration that had a collection per kind shares
 * `site_config` (core/site-config.ts). A workspace made by an earlier release still holds the old
 * collections: the workspace actor's upgrade step moves them, the first use of a kind in a process
 * moves them before it reads, a restore of an older archive moves what it loaded; afterwards the
 * API reads what it read and writes as it wrote (uniqueness by natural key included).
 */
const KINDS = Object.keys(SITE_CONFIG_KINDS);
const names = async (db: Db) => (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
const legacyLeft = async (db: Db) => (await names(db)).filter((name) => KINDS.includes(name));

/** The unique indexes the kinds' own collections had (an earlier release's layout). */
const LEGACY_UNIQUE: Record<string, Document> = {
  content_types: { siteId: 1, slug: 1 },
  taxonomies: { siteId: 1, slug: 1 },
  menus: { siteId: 1, slug: 1 },
  redirects: { siteId: 1, from: 1 },
  roles: { siteId: 1, name: 1 },
  email_templates: { siteId: 1, key: 1 },
  widget_areas: { siteId: 1, key: 1 },
  design_documents: { siteId: 1, kind: 1, key: 1 },
  comment_spam_terms: { siteId: 1, term: 1 },
  api_keys: { siteId: 1, lookup: 1 },
};

/** Turns `site_config` back into the earlier layout: each kind's documents in its own collection, without `_c` and `_k`. */
async function toLegacyLayout(raw: Db): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const docs = await raw.collection(SITE_CONFIG_COLLECTION).find({}).toArray();
  for (const { _c, _k: _key, ...doc } of docs) {
    const kind = String(_c);
    if (LEGACY_UNIQUE[kind]) await raw.collection(kind).createIndex(LEGACY_UNIQUE[kind], { unique: true });
    await raw.collection(kind).insertOne(doc);
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  await raw.collection(SITE_CONFIG_COLLECTION).drop();
  return counts;
}

describe('a workspace of the earlier layout, upgraded by its actor', { timeout: 180_000 }, () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  }, 120_000);
  afterAll(() => world?.close());

  it('moves every kind into site_config; the API then reads the same and writes as before', async () => {
    const tenant = await addLocalWorkspace(world, 'legacy-config.test', { email: 'admin@legacy-config.test', password: 'legacy-password-123' });
    const { key } = await createApiKey(world, {
      host: 'legacy-config.test',
      capabilities: [...CAPABILITIES],
      name: 'move',
      ownerEmail: 'admin@legacy-config.test',
    });
    const send = (method: string, url: string, body?: unknown) =>
      world.app.inject({
        method: method as 'GET',
        url: `/api/manage/v1${url}`,
        headers: { authorization: `Bearer ${key}`, host: 'legacy-config.test' },
        ...(body !== undefined ? { payload: body as object } : {}),
      });
    const ok = async (method: string, url: string, body?: unknown) => {
      const response = await send(method, url, body);
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
      return response.json();
    };
    // One of every kind, through the API.
    await ok('POST', '/content-types', { slug: 'legacy', label: 'Legacy', fields: [] });
    await ok('POST', '/taxonomies', { slug: 'legacy-tax', label: 'Legacy tax' });
    await ok('POST', '/menus', { slug: 'main', name: 'Main' });
    const redirect = await ok('POST', '/redirects', { from: '/old', to: '/new' });
    const role = await ok('POST', '/roles', { name: 'legacy role', capabilities: ['content:read'] });
    const template = BUILTIN_TEMPLATES[0];
    await ok('PUT', `/email-templates/${template.key}`, { subject: 'Hello', html: '<p>Hi</p>', text: 'Hi' });
    await ok('POST', '/widgets/areas', { key: 'sidebar', name: 'Sidebar' });
    await ok('POST', '/widgets', { type: 'text', area: 'sidebar' });
    await ok('PUT', '/patterns', { items: [{ slug: 'hero', title: 'Hero', blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'h' }] } }] });
    await ok('POST', '/comment-rules', { kind: 'links', value: 3, action: 'hold' });
    await ok('POST', '/comment-spam-terms', { term: 'casino' });
    await ok('POST', '/users/invitations', { email: 'invited@legacy-config.test', role: 'editor' });
    const LISTS = [
      '/content-types',
      '/taxonomies',
      '/menus',
      '/redirects',
      '/roles',
      '/email-templates',
      '/widgets/areas',
      '/widgets',
      '/patterns',
      '/comment-rules',
      '/comment-spam-terms',
      '/users/invitations',
      '/plugins',
    ];
    const read = async () => Object.fromEntries(await Promise.all(LISTS.map(async (url) => [url, await ok('GET', url)] as const)));
    const before = await read();

    const { workspaces } = platformCollections(world.services);
    const row = (await workspaces.findOne({ _id: tenant.workspaceId }))!;
    const raw = world.services.mongo.db(row.dbName);
    const counts = await toLegacyLayout(raw);
    expect(Object.keys(counts).sort()).toEqual(
      [
        'api_keys',
        'comment_rules',
        'comment_spam_terms',
        'content_types',
        'design_documents',
        'email_templates',
        'invitations',
        'menus',
        'redirects',
        'roles',
        'taxonomies',
        'widget_areas',
        'widgets',
      ].sort(),
    );
    await workspaces.updateOne({ _id: tenant.workspaceId }, { $set: { indexVersion: 'before-site-config' } });

    await upgradeWorkspaceIndexes(world.services, tenant.workspaceId);

    expect(await legacyLeft(raw)).toEqual([]);
    expect(await raw.collection(SITE_CONFIG_COLLECTION).countDocuments({})).toBe(Object.values(counts).reduce((a, b) => a + b, 0));
    expect((await workspaces.findOne({ _id: tenant.workspaceId }))?.indexVersion).toBe(workspaceIndexVersion(world.services.features));
    expect(await read()).toEqual(before);

    // Writes keep each kind's uniqueness by natural key, and change what they changed before.
    expect((await send('POST', '/menus', { slug: 'main', name: 'Again' })).statusCode).toBe(409);
    expect((await send('POST', '/content-types', { slug: 'legacy', label: 'Again', fields: [] })).statusCode).toBe(409);
    expect((await send('POST', '/redirects', { from: '/old', to: '/elsewhere' })).statusCode).toBe(409);
    expect((await send('POST', '/roles', { name: 'legacy role', capabilities: ['content:read'] })).statusCode).toBe(409);
    expect((await send('POST', '/widgets/areas', { key: 'sidebar', name: 'Again' })).statusCode).toBe(409);
    expect(await read()).toEqual(before);
    await ok('PUT', `/redirects/${redirect.id}`, { from: '/older', to: '/new' });
    expect((await ok('POST', '/redirects', { from: '/old', to: '/again' })).from).toBe('/old');
    await ok('DELETE', `/roles/${role.id}`);
    const after = await read();
    expect(after['/redirects'].data.map((r: { from: string }) => r.from).sort()).toEqual(['/old', '/older']);
    expect(after['/roles'].data.some((r: { id: string }) => r.id === role.id)).toBe(false);
    // The moved documents keep their key: a second redirect from `/older` is refused.
    expect((await send('POST', '/redirects', { from: '/older', to: '/x' })).statusCode).toBe(409);

    // Idempotent: nothing left to move.
    expect(await moveLegacySiteConfig(raw)).toEqual({ moved: 0, dropped: [] });
  });

  it('a clone takes each kind as its own feature does: invitations left behind, the rest to its new site', () => {
    const rewrite = cloneRewrite(world.services, SITE_CONFIG_COLLECTION, new Map([['site-d', 'site-e']]), new Date());
    expect(rewrite({ _id: 'i1', _c: 'invitations', _k: 'i1', siteId: 'site-d', email: 'a@b.test' })).toBeNull();
    expect(rewrite({ _id: 'm1', _c: 'menus', _k: 'main', siteId: 'site-d', slug: 'main' })).toEqual({
      _id: 'm1',
      _c: 'menus',
      _k: 'main',
      siteId: 'site-e',
      slug: 'main',
    });
  });
});

describe('ids of different kinds never meet in site_config', () => {
  it('the kinds whose ids are built from a catalog key (`<siteId>:<key>`) have catalogs that do not overlap', () => {
    const templates = BUILTIN_TEMPLATES.map((t) => t.key);
    const plugins = [...builtinPlugins, ...catalogPlugins].map((p) => p.id);
    expect(templates.filter((key) => plugins.includes(key))).toEqual([]);
    // Design documents' ids have a second colon (`<siteId>:<kind>:<key>`), the export plan's too; neither key holds one.
    expect([...templates, ...plugins].filter((key) => key.includes(':'))).toEqual([]);
  });
});

describe('the move itself', () => {
  let client: MongoClient;
  let raw: Db;
  beforeAll(async () => {
    client = await new MongoClient(process.env.MONGODB_URI!).connect();
    raw = client.db(`t${randomBytes(4).toString('hex')}_site_config`);
    await raw.collection(SITE_CONFIG_COLLECTION).createIndexes(indexDescriptions(SITE_CONFIG_INDEXES));
  });
  afterAll(async () => {
    await raw?.dropDatabase();
    await client?.close();
  });

  const legacy = (siteId: string) => ({
    menus: [{ _id: `${siteId}-m`, siteId, slug: 'main', name: 'Main', items: [], trashedAt: null }],
    redirects: [{ _id: `${siteId}-r`, siteId, from: '/a', to: '/b', status: 301, enabled: true }],
    design_documents: [{ _id: `${siteId}:pattern:hero`, siteId, kind: 'pattern', key: 'hero', value: { title: 'Hero' } }],
    widgets: [{ _id: `${siteId}-w`, siteId, type: 'text', area: 'sidebar', position: 0 }],
  });

  it('resumes a move cut short: what was moved and changed since stays, the rest moves, the old collections go', async () => {
    const docs = legacy('site-a');
    for (const [name, list] of Object.entries(docs)) await raw.collection(name).insertMany(list as Document[]);
    // A move killed after copying the menu (its collection not yet dropped), then a write to the moved menu.
    await raw.collection(SITE_CONFIG_COLLECTION).insertOne({ ...docs.menus[0], name: 'Renamed', _c: 'menus', _k: 'main' } as Document);

    const { dropped } = await moveLegacySiteConfig(raw);
    expect(dropped.sort()).toEqual(Object.keys(docs).sort());
    expect(await legacyLeft(raw)).toEqual([]);
    const stored = await raw.collection(SITE_CONFIG_COLLECTION).find({}).sort({ _id: 1 }).toArray();
    expect(stored.find((d) => d._c === 'menus')?.name).toBe('Renamed');
    expect(stored.find((d) => d._c === 'redirects')).toEqual({ ...docs.redirects[0], _c: 'redirects', _k: '/a' });
    expect(stored.find((d) => d._c === 'design_documents')?._k).toBe('pattern\u0001hero');
    expect(stored.find((d) => d._c === 'widgets')?._k).toBe('site-a-w');
  });

  it('a restored archive of the earlier layout wins over what site_config held', async () => {
    await raw.collection(SITE_CONFIG_COLLECTION).deleteMany({});
    await raw
      .collection(SITE_CONFIG_COLLECTION)
      .insertOne({ _id: 'site-b-m' as never, _c: 'menus', _k: 'main', siteId: 'site-b', slug: 'main', name: 'Newer' });
    await raw.collection('menus').insertOne({ _id: 'site-b-m' as never, siteId: 'site-b', slug: 'main', name: 'Archived' });
    await moveLegacySiteConfig(raw, 'replaced');
    expect(await raw.collection(SITE_CONFIG_COLLECTION).findOne({ _id: 'site-b-m' as never })).toEqual({
      _id: 'site-b-m',
      siteId: 'site-b',
      slug: 'main',
      name: 'Archived',
      _c: 'menus',
      _k: 'main',
    });
  });

  it('before the upgrade step, the first use of a kind in a process moves the old collections first (once)', async () => {
    await raw.collection(SITE_CONFIG_COLLECTION).deleteMany({});
    for (const [name, list] of Object.entries(legacy('site-c'))) await raw.collection(name).insertMany(list as Document[]);
    const db = createSiteConfigViews().wrap(raw);
    expect(unviewed(db)).toBe(raw);
    // Two first uses at once, a cursor and a point read: both see the moved documents, without `_c` or `_k`.
    const [menus, redirect] = await Promise.all([
      db.collection('menus').find({ siteId: 'site-c' }).sort({ slug: 1 }).toArray(),
      db.collection('redirects').findOne({ siteId: 'site-c', from: '/a' }),
    ]);
    expect(menus).toEqual([{ _id: 'site-c-m', siteId: 'site-c', slug: 'main', name: 'Main', items: [], trashedAt: null }]);
    expect(redirect).toEqual({ _id: 'site-c-r', siteId: 'site-c', from: '/a', to: '/b', status: 301, enabled: true });
    expect(await legacyLeft(raw)).toEqual([]);
    // A kind reads only its own documents; its key keeps it unique.
    expect(await db.collection('widgets').countDocuments({ siteId: 'site-c' })).toBe(1);
    await expect(db.collection('redirects').insertOne({ _id: 'dup' as never, siteId: 'site-c', from: '/a', to: '/c' })).rejects.toMatchObject({ code: 11000 });
  });
});
