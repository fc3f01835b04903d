import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser, SCREENSHOTS } from './browser.ts';
import { axeProblems } from './axe.ts';
import { startWorld, type World } from '../support/world.ts';
import { addTestUser, createApiKey, setManagementApi } from '../support/access.ts';

const STEP = { timeout: 240_000 };
/** How long a poll waits for the page: password hashing and the engines are slow on a busy machine. */
const SLOW = { timeout: 30_000 };

/** The site structure pages in Chromium: each one's create/change round trip checked through the Management API. */
describe('site structure pages in Chromium', () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let base: string;
  let key: string;
  const problems: string[] = [];
  const admin = { email: 'structure-admin@example.test', password: 'structure admin password' };
  const viewer = { email: 'structure-viewer@example.test', password: 'structure viewer password' };

  beforeAll(async () => {
    world = await startWorld();
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(world.app.server.address() as AddressInfo).port}`;
    await addTestUser(world, admin.email, { role: 'administrator', password: admin.password });
    await addTestUser(world, viewer.email, { role: 'viewer', password: viewer.password });
    await setManagementApi(world, true);
    ({ key } = await createApiKey(world, {
      capabilities: [
        'content:read',
        'content:create',
        'content:publish',
        'settings:read',
        'settings:manage',
        'users:read',
        'comments:moderate',
        'email-templates:manage',
      ],
    }));
    // 401: the signed-out check of the sign-in page.
    ({ browser, page } = await openAdminBrowser(problems, { expectedConsole: /status of 401\b/ }));
  });

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  const shot = (target: Page, name: string) => target.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  const manage = async (url: string, method: 'GET' | 'POST' = 'GET', payload?: object) => {
    const res = await world.app.inject({ method, url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() };
  };
  const signIn = async (target: Page, who: { email: string; password: string }) => {
    await target.goto(`${base}/admin`);
    await target.locator('body[data-ready]').waitFor({ state: 'attached' });
    await target.getByLabel('Email').fill(who.email);
    await target.getByLabel('Password').fill(who.password);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.locator('#dashboard').waitFor({ state: 'visible' });
  };
  const open = async (target: Page, path: string) => {
    await target.goto(`${base}${path}`);
    await target.locator('body[data-ready]').waitFor({ state: 'attached' });
  };

  it('menus: creates a menu, adds items, reorders them by the keyboard and saves', STEP, async () => {
    await signIn(page, admin);
    await open(page, '/admin/menus');
    await page.getByLabel('Slug').fill('main');
    await page.getByLabel('Name').fill('Main menu');
    await page.getByRole('button', { name: 'Create menu' }).click();
    await page.locator('#editor').waitFor({ state: 'visible' });
    for (const [label, url] of [
      ['Home', '/'],
      ['About', '/about'],
      ['Blog', '/blog'],
    ]) {
      await page.getByLabel('Label').fill(label);
      await page.getByLabel('Link').fill(url);
      await page.keyboard.press('Enter');
    }
    expect(await page.locator('#items .menu-label').allTextContents()).toEqual(['Home', 'About', 'Blog']);
    // The keyboard only: focus "Move up Blog", press Enter twice (focus stays on the moved item's button).
    await page.getByRole('button', { name: 'Move up Blog' }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    expect(await page.locator('#items .menu-label').allTextContents()).toEqual(['Blog', 'Home', 'About']);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Move down Blog');
    await page.getByRole('button', { name: 'Save menu' }).click();
    await expect.poll(() => page.locator('#editor-status').textContent(), SLOW).toBe('Saved.');
    const saved = await manage('/menus/main');
    expect(saved.body.items.map((item: { label: string }) => item.label)).toEqual(['Blog', 'Home', 'About']);
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-01-menus');

    // A drag within the list moves an item too.
    await page.locator('#items > li', { hasText: 'About' }).dragTo(page.locator('#items > li', { hasText: 'Blog' }));
    expect(await page.locator('#items .menu-label').allTextContents()).toEqual(['About', 'Blog', 'Home']);
  });

  it('redirects: adds a rule and switches it off', STEP, async () => {
    await open(page, '/admin/redirects');
    await page.getByLabel('From').fill('/old');
    await page.getByLabel('To').fill('/new');
    await page.getByLabel('Status').selectOption('302');
    await page.getByRole('button', { name: 'Add redirect' }).click();
    await expect.poll(() => page.locator('#redirects tr').count(), SLOW).toBe(1);
    await page.getByLabel('Enabled: /old').uncheck();
    await expect.poll(async () => (await manage('/redirects')).body.data, SLOW).toMatchObject([{ from: '/old', to: '/new', status: 302, enabled: false }]);
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-02-redirects');
  });

  it('roles: creates a custom role with capabilities chosen as checkboxes', STEP, async () => {
    await open(page, '/admin/roles');
    await page.getByLabel('Name').fill('Proofreader');
    await page.getByLabel('content:read', { exact: true }).check();
    await page.getByLabel('content:update', { exact: true }).check();
    await page.getByRole('button', { name: 'Create role' }).click();
    await expect.poll(() => page.locator('#role-form-status').textContent(), SLOW).toBe('Saved the role Proofreader.');
    const roles = (await manage('/roles?limit=200')).body.data;
    expect(roles.find((role: { name: string }) => role.name === 'Proofreader')).toMatchObject({
      builtin: false,
      capabilities: ['content:read', 'content:update'],
    });
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-03-roles');
  });

  it('taxonomies: creates a hierarchical taxonomy and a term tree, shown indented by level', STEP, async () => {
    await open(page, '/admin/taxonomies');
    await page.getByLabel('Slug').fill('topics');
    await page.getByLabel('Label').fill('Topics');
    await page.getByLabel('Hierarchical').check();
    await page.getByRole('button', { name: 'Create taxonomy' }).click();
    await page.locator('#terms-section').waitFor({ state: 'visible' });
    const addTerm = async (name: string, parent?: string) => {
      await page.getByLabel('Term name').fill(name);
      if (parent) await page.locator('#term-parent').selectOption({ label: parent });
      await page.getByRole('button', { name: 'Add term' }).click();
      await expect.poll(() => page.locator('#terms .term-name').allTextContents(), SLOW).toContain(name);
    };
    await addTerm('Science');
    await addTerm('Physics', 'Science');
    await addTerm('Optics', '— Physics');
    await addTerm('Art');
    const tree = await page
      .locator('#terms li')
      .evaluateAll((rows) => rows.map((row) => `${(row as HTMLElement).dataset.level}:${row.querySelector('.term-name')!.textContent}`));
    expect(tree).toEqual(['0:Art', '0:Science', '1:Physics', '2:Optics']);
    const terms = (await manage('/taxonomies/topics/terms?limit=200')).body.data as Array<{ id: string; name: string; parentId: string | null }>;
    const named = (name: string) => terms.find((term) => term.name === name)!;
    expect(named('Physics').parentId).toBe(named('Science').id);
    expect(named('Optics').parentId).toBe(named('Physics').id);
    expect(named('Art').parentId).toBeNull();
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-05-taxonomies');
  });

  it('comments: approves one pending comment and marks another as spam', STEP, async () => {
    const entry = await manage('/content', 'POST', { title: 'Commented', slug: 'commented' });
    expect((await manage(`/content/${entry.body.id}/publish`, 'POST')).status).toBe(200);
    for (const [authorName, body] of [
      ['Ada', 'A fine post.'],
      ['Spammer', 'Buy now!'],
    ]) {
      const res = await world.app.inject({
        method: 'POST',
        url: '/api/comments/v1/content/commented/comments',
        payload: { authorName, authorEmail: 'a@example.test', body },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await open(page, '/admin/comments');
    await expect.poll(() => page.locator('#comments tr').count(), SLOW).toBe(2);
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-06-comments');
    await page.getByRole('button', { name: 'Approve: comment by Ada' }).click();
    await expect.poll(() => page.locator('#comments tr').count(), SLOW).toBe(1);
    await page.getByRole('button', { name: 'Spam: comment by Spammer' }).click();
    await expect.poll(() => page.locator('#comments tr').count(), SLOW).toBe(0);
    const statuses = (await manage('/comments?status=approved,spam')).body.data.map(
      (c: { authorName: string; status: string }) => `${c.authorName}:${c.status}`,
    );
    expect(statuses.sort()).toEqual(['Ada:approved', 'Spammer:spam']);
  });

  it('content types: creates a type with two fields, then adds a third', STEP, async () => {
    await open(page, '/admin/types');
    await page.getByRole('button', { name: 'New content type' }).click();
    await page.getByLabel('Slug').fill('recipe');
    await page.getByLabel('Label', { exact: true }).fill('Recipe');
    const addField = async (name: string, kind: string, options?: string) => {
      await page.getByRole('button', { name: 'Add field' }).click();
      await page.getByLabel('Field name').last().fill(name);
      await page.getByLabel('Kind').last().selectOption(kind);
      if (options) await page.getByLabel('Options').last().fill(options);
    };
    await addField('servings', 'integer');
    await page.getByLabel('Required').last().check();
    await addField('difficulty', 'select', 'easy, hard');
    await page.getByRole('button', { name: 'Save type' }).click();
    await expect.poll(() => page.locator('#type-status').textContent(), SLOW).toBe('Saved.');
    expect((await manage('/content-types/recipe')).body.fields).toEqual([
      { name: 'servings', kind: 'integer', required: true },
      { name: 'difficulty', kind: 'select', required: false, options: ['easy', 'hard'] },
    ]);
    await addField('notes', 'text');
    await page.getByRole('button', { name: 'Save type' }).click();
    await expect
      .poll(async () => (await manage('/content-types/recipe')).body.fields.map((f: { name: string }) => f.name), SLOW)
      .toEqual(['servings', 'difficulty', 'notes']);
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-07-types');
  });

  it('languages: adds a language and switches it off', STEP, async () => {
    await open(page, '/admin/languages');
    await page.getByLabel('Code').fill('fr');
    await page.getByLabel('Name').fill('French');
    await page.getByRole('button', { name: 'Add language' }).click();
    await page.getByLabel('Active: French').waitFor();
    await page.getByLabel('Active: French').uncheck();
    await expect
      .poll(async () => (await manage('/languages')).body.data.find((l: { code: string }) => l.code === 'fr'), SLOW)
      .toMatchObject({ name: 'French', active: false });
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-08-languages');
  });

  it('settings: saves the site title and the comments switch', STEP, async () => {
    await open(page, '/admin/settings');
    expect(await page.getByLabel('Public API enabled').isChecked()).toBe(true);
    await page.getByLabel('Site title').fill('Structure site');
    await page.getByLabel('Comments enabled').uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.locator('#settings-status').textContent(), SLOW).toBe('Saved.');
    expect((await manage('/settings')).body).toMatchObject({ title: 'Structure site', api: { publicEnabled: true, commentsEnabled: false } });
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-09-settings');
  });

  it('e-mail templates: previews a change rendered by the operation, then saves it', STEP, async () => {
    await open(page, '/admin/email-templates');
    await page.getByRole('button', { name: /^Edit template Welcome/ }).click();
    await page.getByLabel('Subject').fill('Hello from {{siteName}}!');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('#preview-subject').textContent(), SLOW).toMatch(/^Hello from .+!$/);
    expect(await page.locator('#preview-subject').textContent()).not.toContain('{{');
    expect(await page.locator('#preview-html').getAttribute('sandbox')).toBe('');
    // The HTML is shown as the mail client would (the frame runs nothing), the text as text.
    await expect.poll(() => page.frameLocator('#preview-html').locator('body').textContent(), SLOW).toContain('Ada Lovelace');
    expect((await page.locator('#preview-text').textContent())!.length).toBeGreaterThan(0);
    expect(await axeProblems(page)).toEqual([]);
    await shot(page, 'structure-10-email-templates');
    await page.getByRole('button', { name: 'Save template' }).click();
    await expect.poll(() => page.locator('#template-status').textContent(), SLOW).toBe('Saved.');
    expect((await manage('/email-templates/welcome')).body).toMatchObject({ subject: 'Hello from {{siteName}}!', customized: true });
  });

  it('a viewer sees the structure but no control to change it, and the API refuses anyway', STEP, async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const other = await context.newPage();
    other.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    await signIn(other, viewer);
    await open(other, '/admin/menus');
    await other.getByRole('button', { name: 'Edit menu Main menu' }).click();
    await other.locator('#editor').waitFor({ state: 'visible' });
    for (const name of ['Create menu', 'Save menu', 'Delete menu', 'Move up Home', 'Add item'])
      expect(await other.getByRole('button', { name }).count(), name).toBe(0);
    expect(await axeProblems(other)).toEqual([]);
    await shot(other, 'structure-04-menus-viewer');
    const refused = await other.evaluate(async () => {
      const res = await fetch('/api/menus/main', { method: 'DELETE', credentials: 'same-origin' });
      return res.status;
    });
    expect(refused).toBe(403);
    expect((await manage('/menus/main')).status).toBe(200);
    // Redirects and roles are not the viewer's to read: the pages say so and offer nothing.
    await open(other, '/admin/redirects');
    expect(await other.getByRole('button', { name: 'Add redirect' }).count()).toBe(0);
    expect(await other.locator('#redirects-error').textContent()).toBe('Forbidden');
    await open(other, '/admin/roles');
    expect(await other.getByRole('button', { name: 'Create role' }).count()).toBe(0);
    await open(other, '/admin/taxonomies');
    await other.getByRole('button', { name: 'Terms of Topics' }).click();
    await expect.poll(() => other.locator('#terms li').count(), SLOW).toBe(4);
    for (const name of ['Create taxonomy', 'Add term', 'Delete term Art']) expect(await other.getByRole('button', { name }).count(), name).toBe(0);
    await open(other, '/admin/types');
    expect(await other.getByRole('button', { name: 'New content type' }).count()).toBe(0);
    expect(await other.getByRole('button', { name: 'Change type Recipe' }).count()).toBe(0);
    for (const [path, name] of [
      ['/admin/languages', 'Add language'],
      ['/admin/settings', 'Save settings'],
      ['/admin/email-templates', 'Save template'],
    ]) {
      await open(other, path);
      expect(await other.getByRole('button', { name }).count(), path).toBe(0);
    }
    await open(other, '/admin/comments');
    expect(await other.locator('#comments-error').textContent()).toBe('Forbidden');
    expect(await other.getByRole('button', { name: /Approve/ }).count()).toBe(0);
    await context.close();
  });

  it('saw no console error, uncaught exception or CSP violation', () => {
    expect(problems.filter((line) => !/status of 403\b/.test(line))).toEqual([]);
  });
});
