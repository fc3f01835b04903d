import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser, SCREENSHOTS } from './browser.ts';
import { startPluginWorld, type PluginWorld } from '../plugins/support.ts';
import { signInCode } from '../support/access.ts';
import { call } from '../export/support.ts';
import { platformCollections } from '../../services/tenancy/platform-db.ts';

const SLOW = { timeout: 90_000 };
const STEP = { timeout: 240_000 };

/**
 * The Exports page in a real browser against the real gateway and worker: a full run with the
 * progress bar moving, the history, a cancelled run, download and preview links. One ordered story.
 */
describe('admin Exports page in Chromium', () => {
  let pw: PluginWorld;
  let browser: Browser;
  let page: Page;
  let base: string;
  const problems: string[] = [];

  beforeAll(async () => {
    pw = await startPluginWorld({ worker: true });
    // Slow batches, so the browser sees the bar move and can cancel.
    Object.assign(pw.world.services.exportTuning, { batchSize: 1, batchPauseMs: 1200 });
    const ctx = await pw.site();
    // The plugin world's site stands in for the default one on the local host names; the CSRF
    // check accepts a local Origin only for the real default site, so this site lists 127.0.0.1.
    await platformCollections(pw.world.services).sites.updateOne({ _id: ctx.site._id }, { $addToSet: { domains: '127.0.0.1' } });
    pw.world.services.sites.forget();
    for (let i = 1; i <= 8; i++) {
      const { id } = await call<{ id: string }>(pw.world.services, ctx, 'content.create', { title: `Story ${i}`, slug: `story-${i}` });
      await call(pw.world.services, ctx, 'content.publish', { id });
    }
    await pw.world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(pw.world.app.server.address() as AddressInfo).port}`;
    ({ browser, page } = await openAdminBrowser(problems, { acceptDownloads: true }));
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await pw?.close();
  }, 120_000);

  const ready = () => page.locator('body[data-ready]').waitFor({ state: 'attached' });
  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  const progressValue = async () => Number(await page.locator('#run-progress').evaluate((bar: HTMLProgressElement) => bar.value));

  it('signs in and opens the Exports page', STEP, async () => {
    await page.goto(`${base}/admin`);
    await ready();
    await page.getByLabel('Email').fill(pw.world.admin.email);
    await page.getByLabel('Password').fill(pw.world.admin.password);
    await page.getByLabel('Two-factor code').fill(await signInCode(pw.world));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#nav').waitFor({ state: 'visible' });
    // The sign-in page asks `/api/auth/me` first: that signed-out 401 is expected, nothing after it.
    problems.length = 0;
    await page.getByRole('link', { name: 'Exports' }).first().click();
    await page.waitForURL(`${base}/admin/exports`);
    await ready();
    await expect.poll(() => page.locator('#run-state').textContent(), SLOW).toBe('No run in progress.');
    expect(await page.locator('#output-summary').textContent()).toBe('Nothing exported yet.');
    expect(await page.locator('#runs-empty').isVisible()).toBe(true);
    await shot('exports-01-empty');
  });

  it('runs a full export with a live progress bar, then lists it in the history', STEP, async () => {
    await page.getByRole('button', { name: 'Run full export' }).click();
    // The error line, if any, says why the bar does not show.
    await expect
      .poll(
        async () =>
          (await page.locator('#run-progress').isVisible()) ||
          `error: ${await page.locator('#run-error').textContent()} / ${await page.locator('#run-state').textContent()}`,
        SLOW,
      )
      .toBe(true);
    await expect.poll(progressValue, SLOW).toBeGreaterThanOrEqual(2);
    expect(await page.locator('#run-progress').getAttribute('max')).toBe('8');
    expect(await page.locator('#run-state').textContent()).toMatch(/^Rendering \(full\): \d of 8 entries$/);
    await expect.poll(() => page.locator('#run-figures').textContent(), SLOW).toMatch(/entries\/s · about \d+ (s|min) left/);
    await shot('exports-02-running');
    const seen = await progressValue();
    await expect.poll(progressValue, SLOW).toBeGreaterThan(seen);
    await expect.poll(() => page.locator('#run-state').textContent(), { timeout: 180_000 }).toBe('No run in progress.');
    await expect.poll(() => page.locator('#runs tr').count(), SLOW).toBe(1);
    expect(await page.locator('#runs tr td').nth(2).textContent()).toBe('succeeded');
    expect(await page.locator('#runs tr td').nth(3).textContent()).toBe('8');
    expect(await page.locator('#output-summary').textContent()).toMatch(/^\d+ files, [\d.]+ (B|KB|MB); last successful run started/);
    await shot('exports-03-done');
  });

  it('downloads the archive and opens the preview', STEP, async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download (.tar.gz)' }).click()]);
    expect(download.suggestedFilename()).toMatch(/-export\.tar\.gz$/);
    const path = await download.path();
    expect(path).toBeTruthy();
    const [preview] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('link', { name: 'Open the preview' }).click()]);
    await preview.waitForLoadState();
    await expect.poll(() => preview.url()).toBe(`${base}/static-preview/en/`);
    expect(await preview.locator('h1').first().textContent()).toBe('Plugin tests');
    await preview.getByRole('link', { name: 'Story 3' }).click();
    await expect.poll(() => preview.locator('h1').first().textContent(), SLOW).toBe('Story 3');
    await preview.screenshot({ path: `${SCREENSHOTS}/exports-04-preview.png`, fullPage: true });
    await preview.close();
  });

  it('cancels a run: the history says cancelled, the last good export stays', STEP, async () => {
    const summary = await page.locator('#output-summary').textContent();
    await page.getByRole('button', { name: 'Run full export' }).click();
    await expect.poll(progressValue, SLOW).toBeGreaterThanOrEqual(1);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.locator('#run-state').textContent(), { timeout: 180_000 }).toBe('No run in progress.');
    await expect.poll(() => page.locator('#runs tr td.status-cancelled').count(), SLOW).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#output-summary').textContent()).toBe(summary);
    await shot('exports-05-cancelled');
    expect(problems).toEqual([]);
  });
});
