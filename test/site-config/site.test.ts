import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { defaultSiteContext, startSiteWorld, type SiteWorld } from './support.ts';

let sw: SiteWorld;
beforeAll(async () => {
  sw = await startSiteWorld();
});
afterAll(() => sw?.close());

const expectError = (res: { statusCode: number; json(): { error?: unknown } }, status: number) => {
  expect(res.statusCode).toBe(status);
  expect(typeof res.json().error).toBe('string');
};

describe('redirects', () => {
  const listAll = async () => (await sw.manage('GET', '/redirects?limit=200')).json().data;

  it('creates, reads, replaces, pages and deletes rules', async () => {
    const created = await sw.manage('POST', '/redirects', { from: '/old/', to: '/new' });
    expect(created.statusCode).toBe(201);
    const rule = created.json();
    expect(rule).toMatchObject({ from: '/old', to: '/new', status: 301, enabled: true });
    expect((await sw.manage('GET', `/redirects/${rule.id}`)).json()).toEqual(rule);
    const replaced = await sw.manage('PUT', `/redirects/${rule.id}`, { from: '/old', to: 'https://example.com/x?y=1', status: 308, enabled: false });
    expect(replaced.json()).toMatchObject({ to: 'https://example.com/x?y=1', status: 308, enabled: false });
    await sw.manage('POST', '/redirects', { from: '/a', to: '/b', status: 302 });
    await sw.manage('POST', '/redirects', { from: '/c', to: '/d', status: 307 });
    const first = (await sw.manage('GET', '/redirects?limit=2')).json();
    expect(first.data).toHaveLength(2);
    const second = (await sw.manage('GET', `/redirects?limit=2&cursor=${encodeURIComponent(first.page.nextCursor)}`)).json();
    expect(second.data.map((r: { from: string }) => r.from)).toEqual(['/c']);
    expect(second.page.nextCursor).toBeNull();
    // The public lookup follows writes at once (its cache is keyed by the content generation).
    expect((await sw.pub('GET', '/redirects?path=/a/')).json()).toEqual({ from: '/a', to: '/b', status: 302 });
    expect((await sw.pub('GET', '/redirects?path=/old')).statusCode).toBe(404); // disabled
    await sw.manage('PUT', `/redirects/${rule.id}`, { from: '/old', to: '/new', enabled: true });
    expect((await sw.pub('GET', '/redirects?path=/old')).json()).toMatchObject({ to: '/new', status: 301 });
    expect((await sw.pub('GET', '/redirects?path=relative')).statusCode).toBe(400);
    expect((await sw.manage('DELETE', `/redirects/${rule.id}`)).statusCode).toBe(200);
    expect((await sw.pub('GET', '/redirects?path=/old')).statusCode).toBe(404);
    expect((await sw.manage('GET', `/redirects/${rule.id}`)).statusCode).toBe(404);
  });

  it('refuses loops, duplicates and bad targets without changing anything', async () => {
    const before = JSON.stringify(await listAll());
    const b = (await listAll()).find((r: { from: string }) => r.from === '/a');
    for (const [body, status] of [
      [{ from: '/x', to: '/x/' }, 400],
      [{ from: '/b', to: '/a' }, 400], // /a → /b exists: a loop of two
      [{ from: '/a', to: '/z' }, 409],
      [{ from: 'relative', to: '/z' }, 400],
      [{ from: '//evil.example', to: '/z' }, 400],
      [{ from: '/y', to: 'http://insecure.example' }, 400],
      [{ from: '/y', to: 'javascript:alert(1)' }, 400],
      [{ from: '/y', to: '/z', status: 303 }, 400],
    ] as const) {
      expectError(await sw.manage('POST', '/redirects', body), status);
    }
    expectError(await sw.manage('PUT', `/redirects/${b.id}`, { from: '/c', to: '/q' }), 409);
    expectError(await sw.manage('PUT', '/redirects/nope', { from: '/q', to: '/r' }), 404);
    expect(JSON.stringify(await listAll())).toBe(before);
  });

  it('reads with settings:read and writes with settings:manage', async () => {
    const reader = await sw.keyWith(['settings:read']);
    expect((await sw.manage('GET', '/redirects', undefined, reader)).statusCode).toBe(200);
    expect((await sw.manage('POST', '/redirects', { from: '/r1', to: '/r2' }, reader)).statusCode).toBe(403);
  });
});

describe('e-mail templates', () => {
  it('lists built-in keys with defaults and previews with sample data', async () => {
    const list = (await sw.manage('GET', '/email-templates')).json().data;
    expect(list.map((t: { key: string }) => t.key)).toEqual(expect.arrayContaining(['welcome', 'password-reset', 'comment-notification']));
    expect(list.every((t: { customized: boolean }) => !t.customized)).toBe(true);
    const welcome = (await sw.manage('GET', '/email-templates/welcome')).json();
    expect(welcome.preview.subject).toBe('Welcome to My Site');
    expect(welcome.variables).toContain('userName');
  });

  it('customizes, escapes values in HTML, and restores the default', async () => {
    const put = await sw.manage('PUT', '/email-templates/comment-notification', {
      subject: 'Comment by {{ commentAuthor }}',
      html: '<p>{{commentBody}}</p>',
      text: '{{commentBody}}',
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ customized: true, preview: { subject: 'Comment by Grace Hopper' } });
    const preview = await sw.manage('POST', '/email-templates/comment-notification/preview', {
      data: { commentBody: '<script>x</script> & "q"', commentAuthor: 'Eve\r\nBcc: all' },
    });
    expect(preview.json()).toEqual({
      subject: 'Comment by Eve Bcc: all',
      html: '<p>&lt;script&gt;x&lt;/script&gt; &amp; &quot;q&quot;</p>',
      text: '<script>x</script> & "q"',
    });
    const restored = await sw.manage('DELETE', '/email-templates/comment-notification');
    expect(restored.json()).toMatchObject({ customized: false, updatedAt: null });
    expect(restored.json().subject).toContain('New comment');
  });

  it('rejects unknown keys, unknown variables and bad subjects, keeping the saved template', async () => {
    await sw.manage('PUT', '/email-templates/welcome', { subject: 'Hi {{userName}}', html: '<p>x</p>', text: 'x' });
    for (const body of [
      { subject: 'Hi {{password}}', html: '<p>x</p>', text: 'x' },
      { subject: 'Hi\nBcc: x', html: '<p>x</p>', text: 'x' },
      { subject: 'Hi', html: '', text: 'x' },
      { subject: 'Hi', html: '<p>x</p>' },
    ]) {
      expectError(await sw.manage('PUT', '/email-templates/welcome', body), 400);
    }
    expectError(await sw.manage('POST', '/email-templates/welcome/preview', { html: '{{nope}}' }), 400);
    expectError(await sw.manage('PUT', '/email-templates/nope', { subject: 'a', html: 'b', text: 'c' }), 404);
    expectError(await sw.manage('GET', '/email-templates/nope'), 404);
    expect((await sw.manage('GET', '/email-templates/welcome')).json()).toMatchObject({ subject: 'Hi {{userName}}', customized: true });
    expect((await sw.manage('GET', '/email-templates', undefined, await sw.keyWith(['settings:manage']))).statusCode).toBe(403);
  });
});

describe('cookies registry', () => {
  it('starts with the session cookie and replaces the list', async () => {
    const initial = (await sw.manage('GET', '/cookies')).json();
    expect(initial.cookies[0]).toMatchObject({ category: 'necessary' });
    const cookies = [{ name: '_ga', provider: 'Google Analytics', category: 'analytics', purpose: 'Visitor statistics', duration: '2 years' }];
    const put = await sw.manage('PUT', '/cookies', { cookies });
    expect(put.statusCode).toBe(200);
    expect((await sw.manage('GET', '/cookies')).json().cookies).toEqual(cookies);
  });

  it('rejects duplicates and bad categories, keeping the registry', async () => {
    const before = (await sw.manage('GET', '/cookies')).json();
    const one = { name: 'a', provider: 'p', category: 'analytics', duration: '1 day' };
    expectError(await sw.manage('PUT', '/cookies', { cookies: [one, one] }), 400);
    expectError(await sw.manage('PUT', '/cookies', { cookies: [{ ...one, category: 'tracking' }] }), 400);
    expectError(await sw.manage('PUT', '/cookies', { cookies: [{ ...one, name: 'bad name;' }] }), 400);
    expect((await sw.manage('GET', '/cookies')).json()).toEqual(before);
    expect((await sw.manage('GET', '/cookies', undefined, await sw.keyWith(['settings:read']))).statusCode).toBe(403);
  });
});

describe('analytics', () => {
  it('counts entries, media and comments of the site', async () => {
    await sw.published({ title: 'Live', slug: 'live' });
    await sw.manage('POST', '/content', { title: 'Draft', slug: 'draft' });
    const comment = await sw.world.app.inject({
      method: 'POST',
      url: '/api/comments/v1/content/live/comments',
      payload: { authorName: 'A', authorEmail: 'a@example.org', body: 'hi' },
    });
    expect(comment.statusCode).toBe(201);
    // Media rows written straight to the real collection: only their counts and sizes matter here.
    const ctx = await defaultSiteContext(sw.world);
    const media = (id: string, size: number, status: string) => ({
      _id: id,
      siteId: ctx.site._id,
      status,
      filename: `${id}.png`,
      size,
      trashedAt: status === 'trashed' ? new Date() : null,
    });
    await ctx.db.collection('media').insertMany([media('m1', 1000, 'stored'), media('m2', 234, 'stored'), media('m3', 50, 'trashed')] as never[]);
    const res = await sw.manage('GET', '/analytics', undefined, await sw.keyWith(['analytics:read']));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.content).toMatchObject({ total: 2, byStatus: { published: 1, draft: 1, archived: 0, scheduled: 0 }, byType: { post: 2 }, trashed: 0 });
    expect(body.media).toEqual({ count: 2, bytes: 1234, trashed: 1 });
    expect(body.comments).toMatchObject({ total: 1, byStatus: { pending: 1, approved: 0 } });
    expect((await sw.manage('GET', '/analytics', undefined, await sw.keyWith(['content:read']))).statusCode).toBe(403);
  });
});

describe('OpenAPI', () => {
  it('documents these routes with their capability in a valid Management document', async () => {
    const doc = (await sw.world.app.inject({ url: '/api/manage/v1/openapi.json' })).json();
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(doc.paths['/comments'].patch['x-required-capability']).toBeDefined();
    for (const path of ['/redirects/{id}', '/email-templates/{key}', '/cookies', '/analytics', '/widgets/layout', '/permalinks', '/themes/customize']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const comments = (await sw.world.app.inject({ url: '/api/comments/v1/openapi.json' })).json();
    expect(comments.paths['/content/{slug}/comments'].post).toBeDefined();
  });
});
