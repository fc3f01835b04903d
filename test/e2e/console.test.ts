import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser, SCREENSHOTS } from './browser.ts';
import { startWorld, type World } from '../support/world.ts';
import { signInCode } from '../support/access.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';

const SLOW = { timeout: 60_000 };
const STEP = { timeout: 240_000 };

/**
 * The operator console (`/admin/platform`) in the real browser against a real gateway and worker:
 * only operators see it; create a workspace, suspend and reactivate it, edit its quotas, delete it
 * with confirmation, undelete it, delete it again and purge it now. One ordered story on one page.
 */
describe('operator console in Chromium', () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let base: string;
  const problems: string[] = [];
  const owner = { email: 'owner@console.example.test', password: 'correct horse battery staple' };

  beforeAll(async () => {
    // The routes wait for the end state (a busy machine's worker may need more than the default 5 s).
    world = await startWorld({ worker: true, env: { LIFECYCLE_WAIT_MS: '60000', BACKUP_DIR: mkdtempSync(join(tmpdir(), 'cwb-console-backups-')) } });
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(world.app.server.address() as AddressInfo).port}`;
    // 401 (signed-out check), 404 (a workspace gone between the list and its usage) and 409 (the
    // refused suspend the delete step provokes on purpose) are answers the page expects and shows.
    ({ browser, page } = await openAdminBrowser(problems, { width: 1300, expectedConsole: /status of (401|404|409)\b/ }));
  });

  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  const ready = () => page.locator('body[data-ready]').waitFor({ state: 'attached' });
  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/console-${name}.png`, fullPage: true });
  const rowOf = (name: string) => page.locator('#workspaces tr', { hasText: name });
  // The status cell's own text (its first node): the cluster and other notes follow it in the cell.
  const statusOf = (name: string) =>
    rowOf(name)
      .locator('td')
      .nth(1)
      .evaluate((cell) => cell.firstChild?.textContent ?? '');
  const deletedOf = (name: string) => page.locator('#deleted tr', { hasText: name });
  const signIn = async (email: string, password: string, host = base) => {
    await page.goto(`${host}/admin`);
    await ready();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    // Operators sign in with a second factor (the helper enrolled them, as the account page would).
    await page.getByLabel('Two-factor code').fill(await signInCode(world, email));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#dashboard').waitFor({ state: 'visible' });
  };

  it('is offered to a platform operator and creates a workspace', STEP, async () => {
    await signIn(world.admin.email, world.admin.password);
    await page.getByRole('link', { name: 'Workspaces' }).first().click();
    await page.waitForURL(`${base}/admin/platform`);
    await ready();
    await page.locator('#console').waitFor({ state: 'visible' });

    await page.getByLabel('Name', { exact: true }).fill('Console <i>shop</i>');
    await page.getByLabel('Domains (comma-separated)').fill('console.example.test, www.console.example.test');
    await page.getByLabel('Administrator email').fill(owner.email);
    await page.getByLabel(/Administrator password/).fill(owner.password);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    // `active`, or `provisioning` when the worker needed longer than the route's wait (the page re-reads).
    await expect
      .poll(async () => (await page.locator('#create-status').textContent()) || `error: ${await page.locator('#create-error').textContent()}`, SLOW)
      .toMatch(/^Workspace "Console <i>shop<\/i>" is (active|provisioning)\.$/);
    await expect.poll(() => statusOf('Console <i>shop</i>'), { timeout: 120_000 }).toBe('active');
    // The create line follows the workspace: no "is provisioning" left once it is active.
    await expect.poll(() => page.locator('#create-status').textContent(), SLOW).toBe('Workspace "Console <i>shop</i>" is active.');
    await shot('01-created');
    const row = await platformCollections(world.services).workspaces.findOne({ name: 'Console <i>shop</i>' });
    expect(row?.status).toBe('active');
    expect(await platformCollections(world.services).domains.countDocuments({ workspaceId: row!._id })).toBe(2);
  });

  it('suspends and reactivates', STEP, async () => {
    const name = 'Console <i>shop</i>';
    await rowOf(name)
      .getByRole('button', { name: `Suspend ${name}` })
      .click();
    await expect.poll(() => statusOf(name), SLOW).toBe('suspended');
    const suspended = await world.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'console.example.test' } });
    expect(suspended.statusCode).toBe(404);
    await shot('02-suspended');
    await rowOf(name)
      .getByRole('button', { name: `Reactivate ${name}` })
      .click();
    await expect.poll(() => statusOf(name), SLOW).toBe('active');
    expect((await world.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'console.example.test' } })).statusCode).toBe(200);
  });

  it('edits quotas and switches', STEP, async () => {
    const name = 'Console <i>shop</i>';
    await rowOf(name)
      .getByRole('button', { name: `Quotas ${name}` })
      .click();
    await page.locator('#quota-panel').waitFor({ state: 'visible' });
    await page.locator('#quota-limits input[data-quota="users"]').fill('5');
    await page.locator('#quota-switches input[data-switch="graphql"]').uncheck();
    await shot('03-quotas');
    await page.getByRole('button', { name: 'Save quotas' }).click();
    await expect
      .poll(async () => (await page.locator('#quota-status').textContent()) || `error: ${await page.locator('#quota-error').textContent()}`, SLOW)
      .toBe('Saved.');
    // The bar is drawn from GET /tenants/{id}/usage (UsageView): one user of the new limit of 5.
    const bar = page.locator('meter[aria-label="users used"]');
    await expect.poll(async () => `${await bar.getAttribute('value')} / ${await bar.getAttribute('max')}`, SLOW).toBe('1 / 5');
    const row = await platformCollections(world.services).workspaces.findOne({ name });
    expect(row?.quotas).toMatchObject({ users: 5, graphql: false });
  });

  it('backs up a workspace with progress, offers the archive, restores it', STEP, async () => {
    const name = 'Console <i>shop</i>';
    await rowOf(name)
      .getByRole('button', { name: `Backups ${name}` })
      .click();
    await page.locator('#backup-panel').waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Start a backup' }).click();
    const backupRow = page.locator('#backups tr').first();
    await expect.poll(async () => (await backupRow.locator('td').nth(2).textContent()) ?? '', SLOW).toBe('succeeded');
    await shot('04-backups');
    const href = await backupRow.getByRole('link', { name: 'Download' }).getAttribute('href');
    const archive = await page.request.get(`${base}${href}`);
    expect(archive.status()).toBe(200);
    expect(archive.headers()['content-type']).toBe('application/x-tar');

    // The confirmation dialog is accepted by the page's own handler (browser.ts).
    await backupRow.getByRole('button', { name: /^Restore backup of / }).click();
    await expect.poll(async () => (await page.locator('#backup-status').textContent()) ?? '', SLOW).toMatch(/^Restore running/);
    const workspace = await platformCollections(world.services).workspaces.findOne({ name });
    const restores = world.services.platformDb.collection<{ workspaceId: string; state: string }>('restores');
    await expect.poll(async () => (await restores.findOne({ workspaceId: workspace!._id }))?.state, SLOW).toBe('succeeded');
    await expect.poll(async () => (await platformCollections(world.services).workspaces.findOne({ name }))?.status, SLOW).toBe('active');
  });

  it('clones a backup into a new workspace through the create form', STEP, async () => {
    await page
      .locator('#backups tr')
      .first()
      .getByRole('button', { name: /^Clone backup of / })
      .click();
    await expect
      .poll(async () => (await page.locator('#create-source-name').textContent()) ?? '', SLOW)
      .toMatch(/^Clone of "Console <i>shop<\/i>", backup of /);
    await page.getByLabel('Name', { exact: true }).fill('Console clone');
    await page.getByLabel('Domains (comma-separated)').fill('clone.console.example.test');
    await page.getByLabel('Administrator email').fill('clone-owner@console.example.test');
    await page.getByLabel(/Administrator password/).fill(owner.password);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => statusOf('Console clone'), { timeout: 120_000 }).toBe('active');
    expect(await page.locator('#create-source').isHidden()).toBe(true);
    const clone = await platformCollections(world.services).workspaces.findOne({ name: 'Console clone' });
    expect(await platformCollections(world.services).domains.countDocuments({ workspaceId: clone!._id })).toBe(1);
  });

  it('deletes only after the name is typed, undeletes, then purges at once when confirmed', STEP, async () => {
    const name = 'Console <i>shop</i>';
    const before = await platformCollections(world.services).workspaces.findOne({ name });
    await rowOf(name)
      .getByRole('button', { name: `Delete ${name}` })
      .click();
    await page.locator('#delete-panel').waitFor({ state: 'visible' });
    await page.getByLabel('Type the workspace name to confirm').fill('wrong name');
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    await expect.poll(() => page.locator('#delete-error').textContent(), SLOW).toBe('Type the exact workspace name to confirm.');
    expect((await platformCollections(world.services).workspaces.findOne({ _id: before!._id }))?.status).toBe('active');

    await page.getByLabel('Type the workspace name to confirm').fill(name);
    // The error of the wrong name does not stand next to the corrected one.
    expect(await page.locator('#delete-error').textContent()).toBe('');
    // A failed row action meanwhile (the operator's own workspace cannot be suspended) shows its error…
    await rowOf('Default workspace').getByRole('button', { name: 'Suspend Default workspace' }).click();
    await expect.poll(() => page.locator('#list-error').textContent(), SLOW).toBe('A workspace cannot suspend itself');
    await shot('04-delete-confirm');
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    // Listed among the deleted, with its purge date; its data kept.
    await expect.poll(() => deletedOf(name).textContent(), SLOW).toContain('kept, purge on');
    expect(await rowOf(name).count()).toBe(0);
    // …and no line of an earlier action outlives the successful delete: not the list error, not the
    // delete error, not the create line, not the "Saved." of the deleted workspace's quota panel.
    for (const id of ['list-error', 'delete-error', 'create-status', 'quota-status']) expect(await page.locator(`#${id}`).textContent(), id).toBe('');
    expect(await page.locator('#quota-panel').isHidden()).toBe(true);
    expect(await page.locator('#delete-panel').isHidden()).toBe(true);
    await shot('05-deleted');
    const databases = async () => (await world.services.mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name);
    expect(await databases()).toContain(before!.dbName);

    // Undelete brings it back, active, in the list of workspaces.
    await deletedOf(name)
      .getByRole('button', { name: `Undelete ${name}` })
      .click();
    await expect.poll(() => statusOf(name), SLOW).toContain('active');
    expect(await page.locator('#deleted-status').textContent()).toBe(`Workspace "${name}" is active.`);

    // Deleted again, then purged now after the confirmation: its database goes.
    await rowOf(name)
      .getByRole('button', { name: `Delete ${name}` })
      .click();
    await page.getByLabel('Type the workspace name to confirm').fill(name);
    await page.getByRole('button', { name: 'Delete workspace' }).click();
    await deletedOf(name)
      .getByRole('button', { name: `Purge now ${name}` })
      .click();
    await page.locator('#purge-panel').waitFor({ state: 'visible' });
    await shot('06-purge-confirm');
    await page.getByRole('button', { name: 'Purge workspace' }).click();
    await expect.poll(() => deletedOf(name).textContent(), SLOW).toContain('purged');
    expect(await deletedOf(name).getByRole('button').count()).toBe(0);
    expect(await page.locator('#purge-panel').isHidden()).toBe(true);
    await shot('07-purged');
    expect(await databases()).not.toContain(before!.dbName);
  });

  it('is not offered to the administrator of a workspace who is not an operator', STEP, async () => {
    const created = await world.app.inject({
      method: 'POST',
      url: '/api/platform/tenants',
      headers: { origin: base, cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') },
      payload: { name: 'Other', domains: ['other.example.test'], admin: owner },
    });
    expect(created.statusCode).toBe(202);
    await expect
      .poll(async () => (await platformCollections(world.services).workspaces.findOne({ _id: created.json().tenant.id }))?.status, { timeout: 120_000 })
      .toBe('active');
    // The workspace administrator signs in on its own host (resolved to the loopback gateway).
    const context = await browser.newContext({ viewport: { width: 1300, height: 700 } });
    const other = await context.newPage();
    await context.route('http://other.example.test/**', async (route) => {
      const request = route.request();
      const url = new URL(request.url());
      // `inject` keeps the Host header (fetch would replace it with the loopback address).
      const answer = await world.app.inject({
        method: request.method() as never,
        url: `${url.pathname}${url.search}`,
        headers: { ...(await request.allHeaders()), host: 'other.example.test' },
        payload: request.postData() ?? undefined,
      });
      await route.fulfill({ status: answer.statusCode, headers: answer.headers as Record<string, string>, body: answer.rawPayload });
    });
    await other.goto('http://other.example.test/admin');
    await other.getByLabel('Email').fill(owner.email);
    await other.getByLabel('Password').fill(owner.password);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.locator('#dashboard').waitFor({ state: 'visible' });
    expect(await other.locator('#nav-platform').isHidden()).toBe(true);
    await other.goto('http://other.example.test/admin/platform');
    await other.locator('body[data-ready]').waitFor({ state: 'attached' });
    expect(await other.locator('#not-operator').isVisible()).toBe(true);
    expect(await other.locator('#console').isHidden()).toBe(true);
    await other.screenshot({ path: `${SCREENSHOTS}/console-06-not-operator.png`, fullPage: true });
    await context.close();
    expect(problems).toEqual([]);
  });
});
