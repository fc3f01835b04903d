import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandStartedEvent } from 'mongodb';
import { startContentWorld, type ContentWorld } from './support.ts';
import { contentCollections, type EntryDoc } from '../../services/content/model.ts';
import { createRecentEntries } from '../../services/content/recent-entries.ts';

// A change that follows this process's own write of the entry starts from the state it wrote
// (services/content/recent-entries.ts): no read of the entry. Another process's write since (a
// second gateway, a job in the worker, a restored backup) is never overwritten from that state: the
// compare-and-set fails on its version or `updatedAt`, and the change reads the entry and computes again.

let cw: ContentWorld;
const entryReads: string[] = [];
beforeAll(async () => {
  cw = await startContentWorld({ monitorCommands: true });
  cw.world.services.mongo.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.commandName === 'find' && event.command.find === 'content_entries') entryReads.push(JSON.stringify(event.command.filter));
  });
});
afterAll(async () => cw?.close());

const entries = () => contentCollections(cw.world.services.workspaceDb(cw.world.defaultWorkspace)).entries;
/** What another gateway's write does to the stored entry: a change of its own and the version moved. */
const writtenElsewhere = (id: string, set: Record<string, unknown>) =>
  entries().updateOne({ _id: id }, { $set: { ...set, updatedAt: new Date() }, $inc: { version: 1 } });
/** A change's reads of the entry (`findEntryInScope`: by id, live only); the search group's reads of versions are not one. */
const readsOf = async (id: string, run: () => Promise<unknown>) => {
  entryReads.length = 0;
  await run();
  return entryReads.filter((filter) => filter.includes(id) && filter.includes('"trashedAt":null')).length;
};

describe('changes after this process wrote the entry', () => {
  it('publish and update after a create read nothing; each lands on the stored state', async () => {
    const entry = await cw.create({ title: 'Remembered', excerpt: 'first' });
    const reads = await readsOf(entry.id, async () => {
      expect((await cw.manage('POST', `/content/${entry.id}/publish`)).statusCode).toBe(200);
      expect((await cw.manage('PATCH', `/content/${entry.id}`, { excerpt: 'second' })).statusCode).toBe(200);
    });
    expect(reads).toBe(0);
    const stored = await entries().findOne({ _id: entry.id });
    expect(stored).toMatchObject({ version: 3, status: 'published', excerpt: 'second', title: 'Remembered' });
  });

  it('a write by another process since is kept: the change reads the entry and computes again', async () => {
    const entry = await cw.create({ title: 'Shared', excerpt: 'first' });
    await writtenElsewhere(entry.id, { title: 'Renamed elsewhere' });
    const res = await cw.manage('PATCH', `/content/${entry.id}`, { excerpt: 'second' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ title: 'Renamed elsewhere', excerpt: 'second', version: 3 });
    expect(await entries().findOne({ _id: entry.id })).toMatchObject({ title: 'Renamed elsewhere', excerpt: 'second', version: 3 });
  });

  it('a stored state of the same version but another write (a restored backup) is kept too', async () => {
    const entry = await cw.create({ title: 'Restored', excerpt: 'first' });
    // The version this process remembers, written by another timeline: same version, other `updatedAt`.
    await entries().updateOne({ _id: entry.id }, { $set: { title: 'From the backup', updatedAt: new Date(Date.now() - 60_000) } });
    // A publish copies the working fields into the published snapshot: from the stored ones.
    expect((await cw.manage('POST', `/content/${entry.id}/publish`)).statusCode).toBe(200);
    expect(await entries().findOne({ _id: entry.id })).toMatchObject({ version: 2, status: 'published', live: { title: 'From the backup' } });
  });

  it('expectedVersion is checked against the stored entry, not the remembered state', async () => {
    const entry = await cw.create({ title: 'Versioned' });
    await writtenElsewhere(entry.id, { excerpt: 'elsewhere' });
    // The remembered state is version 1, the stored one 2: naming 2 succeeds, naming 1 is a conflict with nothing written.
    const stale = await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Stale', expectedVersion: 1 });
    expect(stale.statusCode).toBe(409);
    expect(await entries().findOne({ _id: entry.id })).toMatchObject({ title: 'Versioned', version: 2 });
    const current = await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Current', expectedVersion: 2 });
    expect(current.statusCode).toBe(200);
    expect(current.json()).toMatchObject({ title: 'Current', excerpt: 'elsewhere', version: 3 });
  });

  it('a key whose scope leaves the entry out gets the generic 401, as a read would answer it, and nothing is written', async () => {
    const entry = await cw.create({ title: 'Out of scope' });
    const pagesOnly = await cw.keyWith(['content:read', 'content:update'], { types: ['page'] });
    expect((await cw.manage('PATCH', `/content/${entry.id}`, { title: 'Changed' }, pagesOnly)).statusCode).toBe(401);
    expect(await entries().findOne({ _id: entry.id })).toMatchObject({ title: 'Out of scope', version: 1 });
  });

  it('an entry trashed elsewhere is not found, and nothing is written', async () => {
    const entry = await cw.create({ title: 'Trashed elsewhere' });
    await writtenElsewhere(entry.id, { trashedAt: new Date() });
    expect((await cw.manage('POST', `/content/${entry.id}/publish`)).statusCode).toBe(404);
    expect(await entries().findOne({ _id: entry.id })).toMatchObject({ status: 'draft', version: 2 });
  });
});

describe('the states a process keeps', () => {
  it('keeps the latest, within a count and a size; an entry too big for them is not kept', () => {
    const db = cw.world.services.workspaceDb(cw.world.defaultWorkspace);
    const doc = (id: string, text = 'x') => ({ _id: id, siteId: 's', version: 1, title: text }) as unknown as EntryDoc;
    // Every state here is `size` characters (ids of one length); the size bound holds eight of them.
    const size = JSON.stringify(doc('a0')).length;
    const recent = createRecentEntries(3, size * 8);
    for (const id of ['a0', 'a1', 'a2', 'a3']) recent.remember(db, doc(id));
    expect(['a0', 'a1', 'a2', 'a3'].map((id) => recent.get(db, 's', id)?._id)).toEqual([undefined, 'a1', 'a2', 'a3']);
    // A copy each time: changing what was handed out changes nothing kept.
    recent.get(db, 's', 'a1')!.title = 'changed';
    expect(recent.get(db, 's', 'a1')!.title).toBe('x');
    // Over an eighth of the size bound: not kept, and its older state is gone too.
    recent.remember(db, doc('a2', 'yy'));
    expect(recent.get(db, 's', 'a2')).toBeUndefined();
    // The size bound: a ninth state drops the oldest.
    const bounded = createRecentEntries(100, size * 8);
    const ids = Array.from({ length: 9 }, (_, i) => `b${i}`);
    for (const id of ids) bounded.remember(db, doc(id));
    expect(ids.map((id) => bounded.get(db, 's', id)?._id)).toEqual([undefined, ...ids.slice(1)]);
  });
});
