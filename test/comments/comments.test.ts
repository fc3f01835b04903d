import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSiteWorld, type SiteWorld } from '../site-config/support.ts';

let sw: SiteWorld;
let postId: string;
let ipCounter = 0;
/** Each visitor gets its own IP unless a test pins one, so the per-IP limit only bites where tested. */
const nextIp = () => `10.1.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;

const visitor = (over: Record<string, unknown> = {}) => ({ authorName: 'Ann', authorEmail: 'ann@example.org', body: 'Nice post', ...over });
const postComment = (slug: string, body: unknown, ip = nextIp()) =>
  sw.world.app.inject({ method: 'POST', url: `/api/comments/v1/content/${slug}/comments`, payload: body as object, remoteAddress: ip });
const list = async (query = '') => {
  const res = await sw.manage('GET', `/comments${query}`);
  expect(res.statusCode).toBe(200);
  return res.json().data as Array<Record<string, unknown>>;
};
const all = () => list('?status=pending,approved,spam,trash&limit=200');

beforeAll(async () => {
  sw = await startSiteWorld();
  postId = await sw.published({ title: 'Hello', slug: 'hello' });
});
afterAll(() => sw?.close());

describe('public comment form', () => {
  it('files a visitor comment on a published entry as pending', async () => {
    const res = await postComment('hello', visitor());
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 'pending' });
    const pending = await list('?status=pending');
    expect(pending).toEqual([expect.objectContaining({ id: res.json().id, entryId: postId, status: 'pending', authorName: 'Ann', byModerator: false })]);
  });

  it('refuses drafts, unknown slugs and bad input without storing anything', async () => {
    await sw.manage('POST', '/content', { title: 'Draft', slug: 'draft-one' });
    const before = (await all()).length;
    for (const [slug, body, status] of [
      ['draft-one', visitor(), 404],
      ['nope', visitor(), 404],
      ['hello', visitor({ body: '' }), 400],
      ['hello', visitor({ authorEmail: 'not-mail' }), 400],
      ['hello', visitor({ authorUrl: 'javascript:alert(1)' }), 400],
      ['hello', visitor({ parentId: 'missing' }), 400],
    ] as const) {
      const res = await postComment(slug, body);
      expect(res.statusCode, `${slug} ${JSON.stringify(body)}`).toBe(status);
      expect(typeof res.json().error).toBe('string');
    }
    expect((await all()).length).toBe(before);
  });

  it('is limited per IP', { timeout: 120_000 }, async () => {
    const ip = '10.9.9.9';
    const codes: number[] = [];
    // Windows are fixed minutes: hold the clock in the middle of one so a slow run cannot straddle two.
    const clock = sw.world.services.clock;
    const frozen = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
    sw.world.services.clock = { now: () => new Date(frozen) };
    try {
      for (let i = 0; i < 11; i++) codes.push((await postComment('hello', visitor({ body: `flood ${i}` }), ip)).statusCode);
    } finally {
      sw.world.services.clock = clock;
    }
    expect(codes.slice(0, 10).every((c) => c === 201)).toBe(true);
    expect(codes[10]).toBe(429);
    await sw.manage('PATCH', '/comments', {
      ids: (await list('?status=pending&limit=200')).filter((c) => String(c.body).startsWith('flood')).map((c) => c.id),
      status: 'trash',
    });
  });
});

describe('spam terms and rules', () => {
  it('files matching comments as spam but tells the visitor pending', async () => {
    expect((await sw.manage('POST', '/comment-spam-terms', { term: 'Casino' })).statusCode).toBe(201);
    const dup = await sw.manage('POST', '/comment-spam-terms', { term: 'casino' });
    expect(dup.statusCode).toBe(409);
    const res = await postComment('hello', visitor({ body: 'Best CASINO bonus' }));
    expect(res.json().status).toBe('pending');
    const spam = await list('?status=spam');
    expect(spam.find((c) => c.id === res.json().id)).toMatchObject({ status: 'spam', reason: 'spam term: casino' });
    const terms = (await sw.manage('GET', '/comment-spam-terms')).json();
    expect(terms.data.map((t: { term: string }) => t.term)).toEqual(['casino']);
    expect((await sw.manage('DELETE', '/comment-spam-terms?term=casino')).statusCode).toBe(200);
    expect((await sw.manage('DELETE', '/comment-spam-terms?term=casino')).statusCode).toBe(404);
  });

  it('applies rules: spam on too many links, approve trusted authors', async () => {
    const links = await sw.manage('POST', '/comment-rules', { kind: 'links', value: 1, action: 'spam' });
    expect(links.statusCode).toBe(201);
    expect((await sw.manage('POST', '/comment-rules', { kind: 'email', value: '@trusted.org', action: 'approve' })).statusCode).toBe(201);
    const linky = await postComment('hello', visitor({ body: 'see https://a.example and http://b.example' }));
    const trusted = await postComment('hello', visitor({ authorEmail: 'bob@trusted.org', body: 'hi' }));
    expect(trusted.json().status).toBe('approved');
    const byId = new Map((await all()).map((c) => [c.id, c]));
    expect(byId.get(linky.json().id)).toMatchObject({ status: 'spam' });
    expect(byId.get(trusted.json().id)).toMatchObject({ status: 'approved' });
    const rules = (await sw.manage('GET', '/comment-rules')).json();
    expect(rules.data).toHaveLength(2);
    expect((await sw.manage('DELETE', `/comment-rules?id=${links.json().id}`)).statusCode).toBe(200);
    expect((await sw.manage('GET', '/comment-rules')).json().data).toHaveLength(1);
  });

  it('rejects bad rules and terms without storing them', async () => {
    const before = (await sw.manage('GET', '/comment-rules')).json().data.length;
    for (const body of [
      { kind: 'links', value: 'many', action: 'spam' },
      { kind: 'ip', value: 3, action: 'spam' },
      { kind: 'phrase', value: 'x', action: 'delete' },
      {},
    ]) {
      const res = await sw.manage('POST', '/comment-rules', body);
      expect(res.statusCode).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
    expect((await sw.manage('GET', '/comment-rules')).json().data.length).toBe(before);
    expect((await sw.manage('POST', '/comment-spam-terms', { term: '' })).statusCode).toBe(400);
    expect((await sw.manage('DELETE', '/comment-spam-terms')).statusCode).toBe(400);
    expect((await sw.manage('DELETE', '/comment-rules?id=nope')).statusCode).toBe(404);
  });

  it('reads with comments:moderate, writes with settings:manage', async () => {
    const moderator = await sw.keyWith(['comments:moderate']);
    expect((await sw.manage('GET', '/comment-rules', undefined, moderator)).statusCode).toBe(200);
    expect((await sw.manage('GET', '/comment-spam-terms', undefined, moderator)).statusCode).toBe(200);
    expect((await sw.manage('POST', '/comment-spam-terms', { term: 'viagra' }, moderator)).statusCode).toBe(403);
    expect((await sw.manage('POST', '/comment-rules', { kind: 'ip', value: '1.2.3.4', action: 'spam' }, moderator)).statusCode).toBe(403);
    const reader = await sw.keyWith(['content:read']);
    expect((await sw.manage('GET', '/comments', undefined, reader)).statusCode).toBe(403);
    expect((await sw.manage('GET', '/comment-spam-terms')).json().data).toEqual([]);
  });
});

describe('moderation', () => {
  it('bulk-sets statuses; an unknown id or bad status changes nothing', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await postComment('hello', visitor({ body: `bulk ${i}` }))).json().id);
    const publicIds = async () => (await sw.pub('GET', '/content/hello/comments?limit=100')).json().items.map((c: { id: string }) => c.id);
    expect(await publicIds()).not.toContain(ids[0]); // also fills the public cache
    const snapshot = JSON.stringify(await all());
    const bad = await sw.manage('PATCH', '/comments', { ids: [...ids, 'missing'], status: 'approved' });
    expect(bad.statusCode).toBe(404);
    expect((await sw.manage('PATCH', '/comments', { ids, status: 'deleted' })).statusCode).toBe(400);
    expect((await sw.manage('PATCH', '/comments', { ids: [], status: 'approved' })).statusCode).toBe(400);
    expect(JSON.stringify(await all())).toBe(snapshot);
    const ok = await sw.manage('PATCH', '/comments', { ids, status: 'approved' });
    expect(ok.json()).toMatchObject({ updated: 3 });
    const approved = await list('?status=approved&limit=200');
    expect(ids.every((id) => approved.some((c) => c.id === id))).toBe(true);
    // Visitors see approved comments at once (the cached answer is dropped), without e-mail or IP.
    expect(await publicIds()).toEqual(expect.arrayContaining(ids));
    const item = (await sw.pub('GET', '/content/hello/comments')).json().items[0];
    expect(Object.keys(item).sort()).toEqual(['authorName', 'authorUrl', 'body', 'byModerator', 'createdAt', 'id', 'parentId']);
    expect((await sw.pub('GET', '/content/nope/comments')).statusCode).toBe(404);
  });

  it('edits one comment, checks expectedVersion and validates', async () => {
    const id = (await postComment('hello', visitor({ body: 'tpyo' }))).json().id;
    const edited = await sw.manage('PATCH', `/comments/${id}`, { body: 'typo', status: 'approved', expectedVersion: 1 });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ body: 'typo', status: 'approved', version: 2 });
    for (const [body, status] of [
      [{ expectedVersion: 1, status: 'spam' }, 409],
      [{ status: 'gone' }, 400],
      [{ body: '' }, 400],
    ] as const) {
      const res = await sw.manage('PATCH', `/comments/${id}`, body);
      expect(res.statusCode).toBe(status);
      expect(typeof res.json().error).toBe('string');
    }
    expect((await sw.manage('PATCH', '/comments/nope', { status: 'spam' })).statusCode).toBe(404);
    expect((await all()).find((c) => c.id === id)).toMatchObject({ body: 'typo', status: 'approved', version: 2 });
  });

  it('replies as moderator, approving a held parent; no replies to spam', async () => {
    const parent = (await postComment('hello', visitor({ body: 'question?' }))).json().id;
    const reply = await sw.manage('POST', `/comments/${parent}/reply`, { body: 'answer' });
    expect(reply.statusCode).toBe(201);
    expect(reply.json()).toMatchObject({ parentId: parent, entryId: postId, status: 'approved', byModerator: true });
    expect((await all()).find((c) => c.id === parent)).toMatchObject({ status: 'approved' });
    // A visitor can answer in the thread under an approved comment.
    expect((await postComment('hello', visitor({ parentId: parent, body: 'thanks' }))).statusCode).toBe(201);

    await sw.manage('PATCH', `/comments/${parent}`, { status: 'spam' });
    const before = (await all()).length;
    const refused = await sw.manage('POST', `/comments/${parent}/reply`, { body: 'again' });
    expect(refused.statusCode).toBe(409);
    expect((await sw.manage('POST', `/comments/${parent}/reply`, { body: '' })).statusCode).toBe(400);
    expect((await all()).length).toBe(before);
  });

  it('permanently deletes only trashed comments and keeps their replies in the thread', async () => {
    const top = (await postComment('hello', visitor({ body: 'top' }))).json().id;
    const mid = (await sw.manage('POST', `/comments/${top}/reply`, { body: 'mid' })).json().id;
    const leaf = (await sw.manage('POST', `/comments/${mid}/reply`, { body: 'leaf' })).json().id;
    const keep = (await postComment('hello', visitor({ body: 'keep me' }))).json().id;
    await sw.manage('PATCH', '/comments', { ids: [top, mid], status: 'trash' });

    expect((await sw.manage('DELETE', `/comments?ids=${keep}`)).json()).toMatchObject({ deleted: 0 });
    const res = await sw.manage('DELETE', '/comments');
    expect(res.statusCode).toBe(200);
    expect(res.json().ids).toEqual(expect.arrayContaining([top, mid]));
    const rows = await all();
    expect(rows.some((c) => c.status === 'trash')).toBe(false);
    expect(rows.find((c) => c.id === leaf)).toMatchObject({ parentId: null });
    expect(rows.find((c) => c.id === keep)).toBeTruthy();
  });

  it('pages newest first without repeats; a tampered cursor is a 400', async () => {
    const expected = (await list('?status=approved&limit=200')).map((c) => c.id);
    const seen: unknown[] = [];
    let cursor: string | null = null;
    do {
      const res = await sw.manage('GET', `/comments?status=approved&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = res.json();
      expect(body.page).toMatchObject({ limit: 2, total: body.data.length });
      seen.push(...body.data.map((c: { id: string }) => c.id));
      cursor = body.page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(expected);
    const bad = await sw.manage('GET', '/comments?cursor=abc.def');
    expect(bad.statusCode).toBe(400);
    expect((await sw.manage('GET', '/comments?status=bogus')).statusCode).toBe(400);
  });

  it('filters by the key scope of the entry', async () => {
    const pageId = await sw.published({ title: 'About', slug: 'about', type: 'page' });
    await postComment('about', visitor({ body: 'on a page' }));
    const pagesOnly = await sw.keyWith(['comments:moderate'], { types: ['page'] });
    const rows = (await sw.manage('GET', '/comments?status=pending,approved,spam,trash', undefined, pagesOnly)).json().data;
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ entryId: pageId });
    const other = (await list('?status=approved')).find((c) => c.entryId === postId)!;
    expect((await sw.manage('PATCH', `/comments/${other.id}`, { status: 'spam' }, pagesOnly)).statusCode).toBe(401);
    expect((await sw.manage('PATCH', '/comments', { ids: [other.id], status: 'spam' }, pagesOnly)).statusCode).toBe(401);
    expect((await sw.manage('POST', `/comments/${other.id}/reply`, { body: 'x' }, pagesOnly)).statusCode).toBe(401);
    expect((await all()).find((c) => c.id === other.id)).toMatchObject({ status: 'approved' });
  });

  it('closes comment submission with its own switch while the Public Content API stays open', async () => {
    const before = (await all()).length;
    expect((await sw.manage('PATCH', '/settings', { api: { commentsEnabled: false } })).statusCode).toBe(200);
    try {
      const res = await postComment('hello', visitor({ body: 'while closed' }));
      expect(res.statusCode).toBe(404);
      expect(typeof res.json().error).toBe('string');
      expect((await sw.pub('GET', '/content/hello/comments')).statusCode).toBe(200);
      expect((await all()).length).toBe(before);
    } finally {
      await sw.manage('PATCH', '/settings', { api: { commentsEnabled: true } });
    }
    expect((await postComment('hello', visitor({ body: 'open again' }))).statusCode).toBe(201);
  });

  it('no longer takes comments on the read-only Public Content API, which declares GET only', async () => {
    const res = await sw.world.app.inject({ method: 'POST', url: '/api/v1/content/hello/comments', payload: visitor({ body: 'old way' }) as object });
    expect(res.statusCode).toBe(404);
    const doc = (await sw.world.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const methods = new Set(Object.values(doc.paths).flatMap((ops) => Object.keys(ops)));
    expect([...methods]).toEqual(['get']);
    const comments = (await sw.world.app.inject({ method: 'GET', url: '/api/comments/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(comments.paths['/content/{slug}/comments'])).toEqual(['post']);
    expect(Object.keys(comments.paths['/content/{slug}/comments'].post.responses)).toContain('429');
  });

  it('is closed with the rest of the Public API when its switch is off', async () => {
    const before = (await all()).length;
    expect((await sw.manage('PATCH', '/settings', { api: { publicEnabled: false } })).statusCode).toBe(200);
    try {
      const res = await postComment('hello', visitor({ body: 'while off' }));
      expect(res.statusCode).toBe(404);
      expect(typeof res.json().error).toBe('string');
      expect((await sw.pub('GET', '/content/hello/comments')).statusCode).toBe(404);
      expect((await all()).length).toBe(before);
    } finally {
      await sw.manage('PATCH', '/settings', { api: { publicEnabled: true } });
    }
  });
});
