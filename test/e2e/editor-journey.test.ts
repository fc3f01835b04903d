import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser, SCREENSHOTS } from './browser.ts';
import { startWorld, type World } from '../support/world.ts';
import { addTestUser, createApiKey, openSession } from '../support/access.ts';
import { pngImage } from '../media/support.ts';

const SLOW = { timeout: 60_000 };
const STEP = { timeout: 240_000 };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface EntryView {
  id: string;
  title: string;
  slug: string;
  status: string;
  version: number;
  excerpt: string | null;
  blocks: { blocks: Array<Record<string, unknown>> };
  terms: Record<string, string[]>;
  publishOn: string | null;
  trashedAt?: string | null;
}

/**
 * An editor's whole journey through the content pages in Chromium against a real gateway and
 * worker: sign in, write an entry with three block types, a term and an uploaded image, reorder,
 * a conflict with a parallel API write resolved in the page, schedule, publish, the Public API,
 * a revision restored, trash and restore, bulk actions in the list; then a contributor, who sees
 * no Publish and whom the API refuses. axe-core runs on every page; screenshots in
 * `.data/screenshots/editor-*.png`. One ordered story on one page.
 */
describe('editor journey in Chromium', () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let base: string;
  let key: string;
  let termId: string;
  let entryId = '';
  let contributorId = '';
  const problems: string[] = [];
  const editor = { email: 'editor@journey.example.test', password: 'editor password long enough' };
  const contributor = { email: 'contributor@journey.example.test', password: 'contributor password long enough' };

  beforeAll(async () => {
    world = await startWorld({ worker: true });
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(world.app.server.address() as AddressInfo).port}`;
    await addTestUser(world, editor.email, { role: 'editor', password: editor.password });
    contributorId = (await addTestUser(world, contributor.email, { role: 'contributor', password: contributor.password })).id;
    key = (
      await createApiKey(world, { capabilities: ['content:read', 'content:create', 'content:update', 'content:publish', 'media:read', 'settings:manage'] })
    ).key;
    const term = await manage('POST', '/taxonomies/category/terms', { name: 'News' });
    expect(term.statusCode, term.body).toBe(201);
    termId = term.json().id;
    // 401: the signed-out check before sign-in; 409: the conflict the story provokes on purpose.
    ({ browser, page } = await openAdminBrowser(problems, { width: 1300, expectedConsole: /status of (401|409)\b/ }));
  }, STEP.timeout);

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  function manage(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
    return world.app.inject({
      method,
      url: `/api/manage/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
      ...(payload ? { payload: payload as object } : {}),
    });
  }
  const current = async (): Promise<EntryView> => (await manage('GET', `/content/${entryId}`)).json();
  const ready = () => page.locator('body[data-ready]').waitFor({ state: 'attached' });
  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/editor-${name}.png`, fullPage: true });
  const saveStatus = async () => (await page.locator('#save-status').textContent()) || `error: ${await page.locator('#entry-error').textContent()}`;

  /** axe-core in the page (evaluated through the debugging protocol: the page's CSP allows no inline script). */
  async function axe(name: string) {
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const result = await (
        window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }
      ).axe.run();
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
    });
    expect(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
      `${name}: ${JSON.stringify(violations)}`,
    ).toEqual([]);
  }

  async function signIn(account: { email: string; password: string }) {
    await page.goto(`${base}/admin`);
    await ready();
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#dashboard').waitFor({ state: 'visible' });
  }

  it('signs in as an editor and opens the content list', STEP, async () => {
    await signIn(editor);
    await page.getByRole('link', { name: 'Content', exact: true }).first().click();
    await page.waitForURL(`${base}/admin/content`);
    await ready();
    expect(await page.locator('#entries-empty').isVisible()).toBe(true);
    await axe('content list (empty)');
    await shot('01-list-empty');
  });

  it('creates an entry with three block types, an uploaded image and a term', STEP, async () => {
    await page.getByRole('link', { name: 'New entry' }).click();
    await page.waitForURL(`${base}/admin/entry`);
    await ready();
    await page.getByLabel('Title').fill('Hello from the editor');
    await page.getByLabel('Excerpt').fill('First words.');
    for (const type of ['paragraph', 'heading', 'image']) {
      await page.getByLabel('Block type').selectOption(type);
      await page.getByRole('button', { name: 'Add block' }).click();
    }
    await page.getByLabel('Text', { exact: true }).fill('A paragraph of text.');
    await page.getByLabel('Heading text').fill('A heading');
    await page.getByLabel('Upload a new image').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: await pngImage() });
    await expect.poll(() => page.locator('#blocks li').nth(2).getByRole('status').textContent(), SLOW).toBe('Uploaded photo.png.');
    await page.getByLabel('Alternative text').fill('A small photo');
    await page.getByRole('checkbox', { name: 'News' }).check();
    await axe('entry editor (new)');
    await shot('02-new-entry');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/admin\/entry\?id=/);
    await expect.poll(saveStatus, SLOW).toMatch(/^Saved at /);
    entryId = new URL(page.url()).searchParams.get('id')!;
    const entry = await current();
    expect(entry.title).toBe('Hello from the editor');
    expect(entry.blocks.blocks.map((b) => b.type)).toEqual(['paragraph', 'heading', 'image']);
    expect(entry.blocks.blocks[2]).toMatchObject({ alt: 'A small photo', mediaId: expect.any(String) });
    const media = await manage('GET', `/media/${String(entry.blocks.blocks[2]!.mediaId)}`);
    expect(media.json()).toMatchObject({ filename: 'photo.png', mimeType: 'image/png' });
    expect(entry.terms.category).toEqual([termId]);
    await page.locator('#revisions tr').first().waitFor();
    await axe('entry editor');
    await shot('03-saved');
  });

  it('reorders blocks with a button and with the keyboard; a draft autosaves', STEP, async () => {
    await page.getByRole('button', { name: 'Move up block 2 (Heading)' }).click();
    // The moved block's button keeps the focus; Alt+↓ inside a block moves it back down.
    await expect.poll(() => page.locator('#blocks li').first().getAttribute('data-block-type')).toBe('heading');
    await page.getByLabel('Heading text').focus();
    await page.keyboard.press('Alt+ArrowDown');
    await page.getByLabel('Heading text').focus();
    await page.keyboard.press('Alt+ArrowDown');
    // Autosave (no Save click): heading now last.
    await expect.poll(async () => (await current()).blocks.blocks.map((b) => b.type), SLOW).toEqual(['paragraph', 'image', 'heading']);
    await expect.poll(saveStatus, SLOW).toMatch(/^Saved at /);
  });

  it('shows a conflict with a parallel API change side by side and keeps the editor’s version', STEP, async () => {
    const before = await current();
    const parallel = await manage('PATCH', `/content/${entryId}`, { title: 'Changed through the API' });
    expect(parallel.statusCode).toBe(200);
    await page.getByLabel('Excerpt').fill('Words written in the page.');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#conflict-panel').waitFor({ state: 'visible', timeout: 60_000 });
    const rows = page.locator('#conflict-rows tr');
    await expect.poll(() => rows.filter({ hasText: 'Changed through the API' }).count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Hello from the editor');
    await axe('entry editor (conflict)');
    await shot('04-conflict');
    await page.getByRole('button', { name: 'Keep mine' }).click();
    await expect.poll(saveStatus, SLOW).toMatch(/^Saved your version at /);
    const after = await current();
    expect(after).toMatchObject({ title: 'Hello from the editor', excerpt: 'Words written in the page.' });
    expect(after.version).toBeGreaterThan(before.version + 1);
  });

  it('schedules in the browser’s time zone, then publishes; the Public API serves it', STEP, async () => {
    expect(await page.locator('label[for="publish-on"]').textContent()).toMatch(/^Publish on \(.+, UTC[+−]\d\d:\d\d\)$/);
    const local = await page.evaluate(() => {
      const d = new Date(Date.now() + 3 * 86_400_000);
      d.setSeconds(0, 0);
      const pad = (n: number) => String(n).padStart(2, '0');
      return { value: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`, iso: d.toISOString() };
    });
    await page.getByLabel(/^Publish on/).fill(local.value);
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await expect.poll(saveStatus, SLOW).toMatch(/^Scheduled at /);
    expect(await current()).toMatchObject({ status: 'scheduled', publishOn: local.iso });
    await shot('05-scheduled');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect.poll(saveStatus, SLOW).toMatch(/^Published at /);
    const published = await current();
    expect(published.status).toBe('published');
    const pub = await world.app.inject({ method: 'GET', url: `/api/v1/content/${published.slug}` });
    expect(pub.statusCode, pub.body).toBe(200);
    expect(pub.json()).toMatchObject({ id: entryId, title: 'Hello from the editor', excerpt: 'Words written in the page.' });
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('#preview-body h3').textContent(), SLOW).toBe('Hello from the editor');
    await axe('entry editor (published, preview)');
    await shot('06-published');
  });

  it('shows a revision’s changes and restores it', STEP, async () => {
    // Version 1: the first save (the excerpt "First words.").
    await page.getByRole('button', { name: 'Show changes version 1' }).click();
    await page.locator('#diff-panel').waitFor({ state: 'visible' });
    expect(await page.locator('#diff .del').allTextContents()).toContain('-only in version 1: First words.');
    await axe('entry editor (diff)');
    await shot('07-diff');
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await expect.poll(saveStatus, SLOW).toMatch(/^Restored at /);
    const restored = await current();
    expect(restored.excerpt).toBe('First words.');
    expect(restored.blocks.blocks.map((b) => b.type)).toEqual(['paragraph', 'heading', 'image']);
    expect(await page.getByLabel('Excerpt').inputValue()).toBe('First words.');
  });

  it('moves the entry to the trash and restores it', STEP, async () => {
    await page.getByRole('button', { name: 'Move to trash' }).click();
    await page.waitForURL(/\/admin\/trash/);
    await ready();
    const row = page.locator('#trash tr', { hasText: 'Hello from the editor' });
    await row.waitFor();
    expect((await manage('GET', `/content/${entryId}`)).statusCode).toBe(404);
    // Purge is for administrators (site:admin): an editor sees none.
    expect(await row.getByRole('button', { name: /^Purge/ }).count()).toBe(0);
    await axe('trash');
    await shot('08-trash');
    await row.getByRole('button', { name: 'Restore Hello from the editor' }).click();
    await expect.poll(() => page.locator('#trash-status').textContent(), SLOW).toMatch(/^Restored “Hello from the editor” as a draft/);
    expect((await current()).status).toBe('draft');
  });

  it('lists, filters, searches and pages entries, and publishes in bulk', STEP, async () => {
    for (let i = 1; i <= 27; i++) expect((await manage('POST', '/content', { title: `Bulk entry ${i}`, type: 'page' })).statusCode).toBe(201);
    await page.goto(`${base}/admin/content`);
    await ready();
    await expect.poll(() => page.locator('#entries tr').count()).toBe(25);
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('#entries tr').count()).toBe(3);
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => page.locator('#entries tr').first().textContent()).toContain('Bulk entry 27');
    await page.getByLabel('Sort', { exact: true }).selectOption('oldest');
    await expect.poll(() => page.locator('#entries tr').first().textContent()).toContain('Hello from the editor');
    await page.getByLabel('Type', { exact: true }).selectOption('post');
    await expect.poll(() => page.locator('#entries tr').count()).toBe(1);
    await page.getByLabel('Type', { exact: true }).selectOption('');
    await page.getByLabel('Search', { exact: true }).fill('bulk entry 3');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('#entries tr').first().textContent()).toContain('Bulk entry 3');
    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByLabel('Sort', { exact: true }).selectOption('newest');
    await page.getByLabel('Status', { exact: true }).selectOption('draft');
    await expect.poll(() => page.locator('#entries tr').count()).toBe(25);
    await page.getByRole('checkbox', { name: 'Select Bulk entry 27' }).check();
    await page.getByRole('checkbox', { name: 'Select Bulk entry 26' }).check();
    await axe('content list');
    await shot('09-list');
    await page.locator('#bulk').getByRole('button', { name: 'Publish', exact: true }).click();
    await expect.poll(() => page.locator('#entries-status').textContent(), SLOW).toBe('2 published.');
    const published = (await manage('GET', '/content?status=published&type=page')).json().data.map((e: EntryView) => e.title);
    expect(published.sort()).toEqual(['Bulk entry 26', 'Bulk entry 27']);
  });

  it('a contributor sees no Publish button and the API refuses a publish anyway', STEP, async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/admin`);
    await signIn(contributor);
    await page.goto(`${base}/admin/entry?id=${entryId}`);
    await ready();
    expect(await page.getByLabel('Title').inputValue()).toBe('Hello from the editor');
    expect(await page.getByRole('button', { name: 'Publish' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Schedule', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Move to trash' }).count()).toBe(0);
    await axe('entry editor (contributor)');
    await shot('10-contributor');
    await page.goto(`${base}/admin/content`);
    await ready();
    expect(await page.locator('#bulk').getByRole('button', { name: 'Publish' }).count()).toBe(0);
    const session = await openSession(world, contributorId);
    const refused = await world.app.inject({
      method: 'POST',
      url: `/api/content/${entryId}/publish`,
      headers: { cookie: session.cookie, origin: session.origin },
      payload: {},
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'Forbidden' });
    expect((await current()).status).toBe('draft');
    expect(problems).toEqual([]);
  });
});
