import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SCREENSHOTS } from './browser.ts';
import { useAdminWorld } from './admin-world.ts';
import { axeProblems } from './axe.ts';

const STEP = { timeout: 240_000 };
/** How long a poll waits for the page: password hashing and the engines are slow on a busy machine. */
const SLOW = { timeout: 30_000 };

/** The site structure pages in Chromium: each one's create/change round trip checked through the Management API. */
describe('site structure pages in Chromium', () => {
  const admin = { email: 'structure-admin@example.test', password: 'structure admin password', role: 'administrator' };
  const viewer = { email: 'structure-viewer@example.test', password: 'structure viewer password', role: 'viewer' };
  const ui = useAdminWorld(
    [admin, viewer],
    ['content:read', 'content:create', 'content:publish', 'settings:read', 'settings:manage', 'users:read', 'comments:moderate', 'email-templates:manage'],
  );
  const { manage } = ui;

  const shot = (target: Page, name: string) => target.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  const signIn = async (target: Page, who: { email: string; password: string }) => {
    await target.goto(`${ui.base}/admin`);
    await target.locator('body[data-ready]').waitFor({ state: 'attached' });
    await target.getByLabel('Email').fill(who.email);
    await target.getByLabel('Password').fill(who.password);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.locator('#dashboard').waitFor({ state: 'visible' });
  };
  const open = async (target: Page, path: string) => {
    await target.goto(`${ui.base}${path}`);
    await target.locator('body[data-ready]').waitFor({ state: 'attached' });
  };

  it('menus: creates a menu, adds items, reorders them by the keyboard and saves', STEP, async () => {
    await signIn(ui.page, admin);
    await open(ui.page, '/admin/menus');
    await ui.page.getByLabel('Slug').fill('main');
    await ui.page.getByLabel('Name').fill('Main menu');
    await ui.page.getByRole('button', { name: 'Create menu' }).click();
    await ui.page.locator('#editor').waitFor({ state: 'visible' });
    for (const [label, url] of [
      ['Home', '/'],
      ['About', '/about'],
      ['Blog', '/blog'],
    ]) {
      await ui.page.getByLabel('Label').fill(label);
      await ui.page.getByLabel('Link').fill(url);
      await ui.page.keyboard.press('Enter');
    }
    expect(await ui.page.locator('#items .menu-label').allTextContents()).toEqual(['Home', 'About', 'Blog']);
    // The keyboard only: focus "Move up Blog", press Enter twice (focus stays on the moved item's button).
    await ui.page.getByRole('button', { name: 'Move up Blog' }).focus();
    await ui.page.keyboard.press('Enter');
    await ui.page.keyboard.press('Enter');
    expect(await ui.page.locator('#items .menu-label').allTextContents()).toEqual(['Blog', 'Home', 'About']);
    expect(await ui.page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Move down Blog');
    await ui.page.getByRole('button', { name: 'Save menu' }).click();
    await expect.poll(() => ui.page.locator('#editor-status').textContent(), SLOW).toBe('Saved.');
    const saved = await manage('GET', '/menus/main');
    expect(saved.body.items.map((item: { label: string }) => item.label)).toEqual(['Blog', 'Home', 'About']);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-01-menus');

    // A drag within the list moves an item too.
    await ui.page.locator('#items > li', { hasText: 'About' }).dragTo(ui.page.locator('#items > li', { hasText: 'Blog' }));
    expect(await ui.page.locator('#items .menu-label').allTextContents()).toEqual(['About', 'Blog', 'Home']);
  });

  it('redirects: adds a rule and switches it off', STEP, async () => {
    await open(ui.page, '/admin/redirects');
    await ui.page.getByLabel('From').fill('/old');
    await ui.page.getByLabel('To').fill('/new');
    await ui.page.getByLabel('Status').selectOption('302');
    await ui.page.getByRole('button', { name: 'Add redirect' }).click();
    await expect.poll(() => ui.page.locator('#redirects tr').count(), SLOW).toBe(1);
    await ui.page.getByLabel('Enabled: /old').uncheck();
    await expect
      .poll(async () => (await manage('GET', '/redirects')).body.data, SLOW)
      .toMatchObject([{ from: '/old', to: '/new', status: 302, enabled: false }]);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-02-redirects');
  });

  it('roles: creates a custom role with capabilities chosen as checkboxes', STEP, async () => {
    await open(ui.page, '/admin/roles');
    await ui.page.getByLabel('Name').fill('Proofreader');
    await ui.page.getByLabel('content:read', { exact: true }).check();
    await ui.page.getByLabel('content:update', { exact: true }).check();
    await ui.page.getByRole('button', { name: 'Create role' }).click();
    await expect.poll(() => ui.page.locator('#role-form-status').textContent(), SLOW).toBe('Saved the role Proofreader.');
    const roles = (await manage('GET', '/roles?limit=200')).body.data;
    expect(roles.find((role: { name: string }) => role.name === 'Proofreader')).toMatchObject({
      builtin: false,
      capabilities: ['content:read', 'content:update'],
    });
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-03-roles');
  });

  it('taxonomies: creates a hierarchical taxonomy and a term tree, shown indented by level', STEP, async () => {
    await open(ui.page, '/admin/taxonomies');
    await ui.page.getByLabel('Slug').fill('topics');
    await ui.page.getByLabel('Label').fill('Topics');
    await ui.page.getByLabel('Hierarchical').check();
    await ui.page.getByRole('button', { name: 'Create taxonomy' }).click();
    await ui.page.locator('#terms-section').waitFor({ state: 'visible' });
    const addTerm = async (name: string, parent?: string) => {
      await ui.page.getByLabel('Term name').fill(name);
      if (parent) await ui.page.locator('#term-parent').selectOption({ label: parent });
      await ui.page.getByRole('button', { name: 'Add term' }).click();
      await expect.poll(() => ui.page.locator('#terms .term-name').allTextContents(), SLOW).toContain(name);
    };
    await addTerm('Science');
    await addTerm('Physics', 'Science');
    await addTerm('Optics', '— Physics');
    await addTerm('Art');
    const tree = await ui.page
      .locator('#terms li')
      .evaluateAll((rows) => rows.map((row) => `${(row as HTMLElement).dataset.level}:${row.querySelector('.term-name')!.textContent}`));
    expect(tree).toEqual(['0:Art', '0:Science', '1:Physics', '2:Optics']);
    const terms = (await manage('GET', '/taxonomies/topics/terms?limit=200')).body.data as Array<{ id: string; name: string; parentId: string | null }>;
    const named = (name: string) => terms.find((term) => term.name === name)!;
    expect(named('Physics').parentId).toBe(named('Science').id);
    expect(named('Optics').parentId).toBe(named('Physics').id);
    expect(named('Art').parentId).toBeNull();
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-05-taxonomies');
  });

  it('comments: approves one pending comment and marks another as spam', STEP, async () => {
    const entry = await manage('POST', '/content', { title: 'Commented', slug: 'commented' });
    expect((await manage('POST', `/content/${entry.body.id}/publish`)).status).toBe(200);
    for (const [authorName, body] of [
      ['Ada', 'A fine post.'],
      ['Spammer', 'Buy now!'],
    ]) {
      const res = await ui.world.app.inject({
        method: 'POST',
        url: '/api/comments/v1/content/commented/comments',
        payload: { authorName, authorEmail: 'a@example.test', body },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await open(ui.page, '/admin/comments');
    await expect.poll(() => ui.page.locator('#comments tr').count(), SLOW).toBe(2);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-06-comments');
    await ui.page.getByRole('button', { name: 'Approve: comment by Ada' }).click();
    await expect.poll(() => ui.page.locator('#comments tr').count(), SLOW).toBe(1);
    await ui.page.getByRole('button', { name: 'Spam: comment by Spammer' }).click();
    await expect.poll(() => ui.page.locator('#comments tr').count(), SLOW).toBe(0);
    const statuses = (await manage('GET', '/comments?status=approved,spam')).body.data.map(
      (c: { authorName: string; status: string }) => `${c.authorName}:${c.status}`,
    );
    expect(statuses.sort()).toEqual(['Ada:approved', 'Spammer:spam']);
  });

  it('content types: creates a type with two fields, then adds a third', STEP, async () => {
    await open(ui.page, '/admin/types');
    await ui.page.getByRole('button', { name: 'New content type' }).click();
    await ui.page.getByLabel('Slug').fill('recipe');
    await ui.page.getByLabel('Label', { exact: true }).fill('Recipe');
    const addField = async (name: string, kind: string, options?: string) => {
      await ui.page.getByRole('button', { name: 'Add field' }).click();
      await ui.page.getByLabel('Field name').last().fill(name);
      await ui.page.getByLabel('Kind').last().selectOption(kind);
      if (options) await ui.page.getByLabel('Options').last().fill(options);
    };
    await addField('servings', 'integer');
    await ui.page.getByLabel('Required').last().check();
    await addField('difficulty', 'select', 'easy, hard');
    await ui.page.getByRole('button', { name: 'Save type' }).click();
    await expect.poll(() => ui.page.locator('#type-status').textContent(), SLOW).toBe('Saved.');
    expect((await manage('GET', '/content-types/recipe')).body.fields).toEqual([
      { name: 'servings', kind: 'integer', required: true },
      { name: 'difficulty', kind: 'select', required: false, options: ['easy', 'hard'] },
    ]);
    await addField('notes', 'text');
    await ui.page.getByRole('button', { name: 'Save type' }).click();
    await expect
      .poll(async () => (await manage('GET', '/content-types/recipe')).body.fields.map((f: { name: string }) => f.name), SLOW)
      .toEqual(['servings', 'difficulty', 'notes']);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-07-types');
  });

  it('languages: adds a language and switches it off', STEP, async () => {
    await open(ui.page, '/admin/languages');
    await ui.page.getByLabel('Code').fill('fr');
    await ui.page.getByLabel('Name').fill('French');
    await ui.page.getByRole('button', { name: 'Add language' }).click();
    await ui.page.getByLabel('Active: French').waitFor();
    await ui.page.getByLabel('Active: French').uncheck();
    await expect
      .poll(async () => (await manage('GET', '/languages')).body.data.find((l: { code: string }) => l.code === 'fr'), SLOW)
      .toMatchObject({ name: 'French', active: false });
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-08-languages');
  });

  it('settings: saves the site title and the comments switch', STEP, async () => {
    await open(ui.page, '/admin/settings');
    expect(await ui.page.getByLabel('Public API enabled').isChecked()).toBe(true);
    await ui.page.getByLabel('Site title').fill('Structure site');
    await ui.page.getByLabel('Comments enabled').uncheck();
    await ui.page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => ui.page.locator('#settings-status').textContent(), SLOW).toBe('Saved.');
    expect((await manage('GET', '/settings')).body).toMatchObject({ title: 'Structure site', api: { publicEnabled: true, commentsEnabled: false } });
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-09-settings');
  });

  it('e-mail templates: previews a change rendered by the operation, then saves it', STEP, async () => {
    await open(ui.page, '/admin/email-templates');
    await ui.page.getByRole('button', { name: /^Edit template Welcome/ }).click();
    await ui.page.getByLabel('Subject').fill('Hello from {{siteName}}!');
    await ui.page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => ui.page.locator('#preview-subject').textContent(), SLOW).toMatch(/^Hello from .+!$/);
    expect(await ui.page.locator('#preview-subject').textContent()).not.toContain('{{');
    expect(await ui.page.locator('#preview-html').getAttribute('sandbox')).toBe('');
    // The HTML is shown as the mail client would (the frame runs nothing), the text as text.
    await expect.poll(() => ui.page.frameLocator('#preview-html').locator('body').textContent(), SLOW).toContain('Ada Lovelace');
    expect((await ui.page.locator('#preview-text').textContent())!.length).toBeGreaterThan(0);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot(ui.page, 'structure-10-email-templates');
    await ui.page.getByRole('button', { name: 'Save template' }).click();
    await expect.poll(() => ui.page.locator('#template-status').textContent(), SLOW).toBe('Saved.');
    expect((await manage('GET', '/email-templates/welcome')).body).toMatchObject({ subject: 'Hello from {{siteName}}!', customized: true });
  });

  it('a viewer sees the structure but no control to change it, and the API refuses anyway', STEP, async () => {
    const context = await ui.browser.newContext({ viewport: { width: 1200, height: 900 } });
    const other = await context.newPage();
    other.on('pageerror', (error) => ui.problems.push(`pageerror: ${error.message}`));
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
    expect((await manage('GET', '/menus/main')).status).toBe(200);
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
    expect(ui.problems.filter((line) => !/status of 403\b/.test(line))).toEqual([]);
  });
});
