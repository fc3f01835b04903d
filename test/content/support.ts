import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { kill9, spawnWorkerProcess } from '../support/worker-process.ts';
import { startWorld, type World, type WorldOptions } from '../support/world.ts';
import { createApiKey, defaultSiteContext, signIn } from '../support/access.ts';
import { CAPABILITIES, type Capability } from '../../services/core/capabilities.ts';
import type { KeyScope } from '../../services/core/principal.ts';
import { emptyBlocks, newEntryState, type EntryDoc } from '../../services/content/model.ts';
import { newId } from '../../services/core/ids.ts';
import { eventually } from '../support/polling.ts';

export interface ContentWorld {
  world: World;
  /** A key with every capability. */
  key: string;
  events: Array<{ event: string; data: Record<string, unknown> }>;
  manage(method: string, url: string, body?: unknown, key?: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  pub(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  keyWith(capabilities: Capability[], scope?: KeyScope): Promise<string>;
  /** Creates an entry through the API and returns its JSON. */
  create(body: Record<string, unknown>): Promise<Entry>;
  close(): Promise<void>;
}

export interface Entry {
  id: string;
  title: string;
  slug: string;
  status: string;
  version: number;
  locale: string;
  type: string;
  [key: string]: unknown;
}

/** A world with an all-capabilities key, HTTP helpers for both surfaces, and a record of emitted events. */
export async function startContentWorld(options: WorldOptions = {}): Promise<ContentWorld> {
  const world = await startWorld(options);
  const events: ContentWorld['events'] = [];
  const original = world.services.events;
  world.services.events = {
    async publish(ctx, event, data) {
      events.push({ event, data });
      await original.publish(ctx, event, data);
    },
  };
  const key = (await createApiKey(world, { capabilities: [...CAPABILITIES] })).key;
  const manage: ContentWorld['manage'] = (method, url, body, useKey = key, headers = {}) =>
    world.app.inject({
      method: method as 'GET',
      url: `/api/manage/v1${url}`,
      headers: { authorization: `Bearer ${useKey}`, ...headers },
      ...(body !== undefined ? { payload: body as object } : {}),
    });
  return {
    world,
    key,
    events,
    manage,
    pub: (url, headers = {}) => world.app.inject({ method: 'GET', url: `/api/v1${url}`, headers }),
    keyWith: async (capabilities, scope) => (await createApiKey(world, { capabilities, scope })).key,
    async create(body) {
      const res = await manage('POST', '/content', body);
      if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    close: () => world.close(),
  };
}

export { defaultSiteContext, signIn };

/**
 * An entry's history once its latest revision is the one `wanted` accepts: a worker's change records
 * the revision a round trip after the entry itself (services/content/write-path.ts, step 6), so a
 * test that saw the entry change may read the history a moment early.
 */
export function historyOnceRevised(read: () => Promise<LightMyRequestResponse>, wanted: (latest: Record<string, unknown>) => boolean, what: string) {
  return eventually(
    async () => {
      const data = (await read()).json().data as Array<Record<string, unknown>>;
      return data[0] && wanted(data[0]) && data;
    },
    what,
    10_000,
    100,
  );
}

/** Every page of a Management list, following `nextCursor`. */
export async function allPages<T>(cw: ContentWorld, url: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const sep = url.includes('?') ? '&' : '?';
    const res = await cw.manage('GET', `${url}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    const body = res.json();
    items.push(...body.data);
    cursor = body.page.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('too many pages');
}

/**
 * Setup only: an entry document in the shape the write path leaves (no postings, no revision), for a
 * test that writes straight to the database.
 */
export function storedEntryDoc(
  siteId: string,
  entry: { title: string; slug: string; published: boolean; _id?: string; type?: string; terms?: EntryDoc['terms']; blocks?: EntryDoc['blocks']; at?: Date },
): EntryDoc {
  const now = entry.at ?? new Date();
  const text = {
    title: entry.title,
    titleLower: entry.title.toLowerCase(),
    slug: entry.slug,
    excerpt: null,
    blocks: entry.blocks ?? emptyBlocks(),
    fields: {},
  };
  return {
    _id: entry._id ?? newId(now.getTime()),
    siteId,
    type: entry.type ?? 'post',
    ...text,
    locale: 'en',
    status: entry.published ? 'published' : 'draft',
    live: entry.published ? text : null,
    publishedAt: entry.published ? now : null,
    authorId: null,
    terms: entry.terms ?? {},
    ...newEntryState(now),
  };
}

/**
 * Setup only: `count` posts of one site carrying one tag, in the shape the write path leaves
 * (written straight to the database when a test's subject is a job over many entries).
 */
export function taggedEntryDocs(siteId: string, tagId: string, count: number, options: { titlePrefix: string; published: boolean }): EntryDoc[] {
  const now = new Date();
  return Array.from({ length: count }, (_, i) =>
    storedEntryDoc(siteId, {
      _id: newId(now.getTime() + i),
      title: `${options.titlePrefix} ${i}`,
      slug: `${options.titlePrefix.toLowerCase()}-${i}`,
      published: options.published,
      terms: { tag: [tagId] },
      at: now,
    }),
  );
}

export interface ContentCrashWorld {
  cw: ContentWorld;
  /** Starts a worker in a child process (stopped after the tests), for a test to kill. */
  spawnWorker(): Promise<ChildProcess>;
}

/** A crash test's world, made before its tests and closed after them: no in-process worker, only the child processes work. */
export function useContentCrashWorld(): ContentCrashWorld {
  const children: ChildProcess[] = [];
  const crash: ContentCrashWorld = {
    cw: undefined as unknown as ContentWorld,
    async spawnWorker() {
      const child = await spawnWorkerProcess(crash.cw.world.config, {}, 90_000);
      children.push(child);
      return child;
    },
  };
  beforeAll(async () => {
    crash.cw = await startContentWorld();
  }, 120_000);
  afterAll(async () => {
    for (const child of children) await kill9(child);
    await crash.cw?.close();
  }, 120_000);
  return crash;
}
