import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { SCREENSHOTS } from './browser.ts';
import { useAdminWorld } from './admin-world.ts';
import { axeProblems } from './axe.ts';

const STEP = { timeout: 240_000 };
/** How long a poll waits for the page: uploads and password hashing are slow on a busy machine. */
const SLOW = { timeout: 30_000 };

const png = (width: number, height: number, r: number) =>
  sharp({ create: { width, height, channels: 3, background: { r, g: 120, b: 200 } } })
    .png()
    .toBuffer();

/** The media library in Chromium: uploads (input and drop) with progress, alt text, focal point, replace, a delete that warns. */
describe('media library in Chromium', () => {
  const editor = { email: 'media-editor@example.test', password: 'media editor password', role: 'editor' };
  const viewer = { email: 'media-viewer@example.test', password: 'media viewer password', role: 'viewer' };
  const ui = useAdminWorld([editor, viewer], ['media:read', 'content:read', 'content:create']);
  const { manage } = ui;

  /** A status line's text, or else its section's error line: a failure then says what went wrong. */
  const statusOr = (status: string, error: string) => async () =>
    (await ui.page.locator(status).textContent()) || `error: ${await ui.page.locator(error).textContent()}`;
  const shot = (name: string) => ui.page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  const signIn = async (target: Page, who: { email: string; password: string }) => {
    await target.goto(`${ui.base}/admin?next=/admin/media`);
    await target.locator('body[data-ready]').waitFor({ state: 'attached' });
    await target.getByLabel('Email').fill(who.email);
    await target.getByLabel('Password').fill(who.password);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.waitForURL(`${ui.base}/admin/media`);
    await target.locator('body[data-ready]').waitFor({ state: 'attached' });
  };
  const byName = async (filename: string) => (await manage('GET', `/media?search=${encodeURIComponent(filename)}`)).body.data[0];

  it('uploads two files by the input and one by a drop, each with its progress', STEP, async () => {
    await signIn(ui.page, editor);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot('media-01-empty');

    await ui.page.getByLabel('Choose files').setInputFiles([
      { name: 'blue.png', mimeType: 'image/png', buffer: await png(120, 80, 20) },
      { name: 'green.png', mimeType: 'image/png', buffer: await png(60, 60, 40) },
    ]);
    const uploads = ui.page.getByRole('list', { name: 'Uploads' });
    const outcomes = () => uploads.locator('li').allTextContents();
    await expect.poll(outcomes, SLOW).toEqual(['blue.pngUploaded', 'green.pngUploaded']);
    expect(await ui.page.getByLabel('Upload progress of blue.png').evaluate((bar: HTMLProgressElement) => bar.value)).toBe(100);
    expect(await ui.page.getByLabel('Upload progress of green.png').evaluate((bar: HTMLProgressElement) => bar.value)).toBe(100);

    // A synthetic drop: a DataTransfer holding a File, as the browser builds for a real one.
    const dropped = [...(await png(90, 30, 200))];
    await ui.page.evaluate((bytes) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(bytes)], 'dropped.png', { type: 'image/png' }));
      const zone = document.getElementById('drop-zone')!;
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, dropped);
    await expect.poll(outcomes, SLOW).toEqual(['blue.pngUploaded', 'green.pngUploaded', 'dropped.pngUploaded']);
    await expect.poll(() => ui.page.locator('#media-grid li').count(), SLOW).toBe(3);
    for (const name of ['blue.png', 'green.png', 'dropped.png']) expect(await byName(name)).toMatchObject({ filename: name, mimeType: 'image/png' });
    await shot('media-02-grid');

    await ui.page.getByRole('button', { name: 'List' }).click();
    expect(await ui.page.locator('#media-rows tr').count()).toBe(3);
    await ui.page.getByLabel('Search').fill('gre');
    await expect.poll(() => ui.page.locator('#media-rows tr').count(), SLOW).toBe(1);
    expect(await ui.page.locator('#media-rows tr td').first().textContent()).toBe('green.png');
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot('media-03-list-search');
    await ui.page.getByLabel('Search').fill('');
    await expect.poll(() => ui.page.locator('#media-rows tr').count(), SLOW).toBe(3);
    await ui.page.getByRole('button', { name: 'Grid' }).click();
  });

  it('saves alt text and a focal point set by a click, then by the keyboard', STEP, async () => {
    await ui.page.getByRole('button', { name: 'Details of blue.png' }).click();
    await ui.page.getByLabel('Alt text').fill('A blue rectangle');
    const image = ui.page.locator('#details-image');
    const box = (await image.boundingBox())!;
    await image.click({ position: { x: box.width * 0.25, y: box.height * 0.75 } });
    const x = Number(await ui.page.getByLabel('Focal X').inputValue());
    const y = Number(await ui.page.getByLabel('Focal Y').inputValue());
    expect(x).toBeCloseTo(0.25, 1);
    expect(y).toBeCloseTo(0.75, 1);
    expect(await ui.page.locator('#focal-marker').isVisible()).toBe(true);
    // The keyboard: the fields step by 0.01 with the arrow keys.
    await ui.page.getByLabel('Focal X').focus();
    await ui.page.keyboard.press('ArrowUp');
    const keyed = Number(await ui.page.getByLabel('Focal X').inputValue());
    expect(keyed).toBeCloseTo(x + 0.01, 5);
    await ui.page.getByRole('button', { name: 'Save details' }).click();
    await expect.poll(statusOr('#details-status', '#details-error'), SLOW).toBe('Saved.');
    const saved = await byName('blue.png');
    expect(saved.altText).toBe('A blue rectangle');
    expect(saved.focalX).toBeCloseTo(keyed, 5);
    expect(saved.focalY).toBeCloseTo(y, 5);
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot('media-04-details');
  });

  it('replaces the file: same id, new bytes', STEP, async () => {
    const before = await byName('blue.png');
    const replacement = await png(200, 100, 90);
    await ui.page.getByLabel('Replace file').setInputFiles({ name: 'blue-v2.png', mimeType: 'image/png', buffer: replacement });
    await expect.poll(statusOr('#replace-status', '#replace-error'), SLOW).toBe('Replaced with blue-v2.png.');
    const after = (await manage('GET', `/media/${before.id}`)).body;
    expect(after).toMatchObject({ id: before.id, filename: 'blue-v2.png', size: replacement.length, width: 200, height: 100, altText: 'A blue rectangle' });
    expect(after.url).not.toBe(before.url);
    expect(await ui.page.locator('#details-title').textContent()).toBe('blue-v2.png');
    await shot('media-05-replaced');
  });

  it('warns before deleting an item in use, naming the entry, then deletes it', STEP, async () => {
    const item = await byName('green.png');
    const entry = await manage('POST', '/content', {
      title: 'Green page',
      slug: 'green-page',
      blocks: { version: 1, blocks: [{ type: 'image', mediaId: item.id, alt: 'green' }] },
    });
    expect(entry.status).toBe(201);
    await ui.page.getByRole('button', { name: 'Details of green.png' }).click();
    await expect.poll(() => ui.page.locator('#usage li').allTextContents(), SLOW).toEqual(['Green page (post, en, draft)']);
    await ui.page.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => ui.page.locator('#delete-warning').textContent(), SLOW).toContain('“Green page”');
    expect(await axeProblems(ui.page)).toEqual([]);
    await shot('media-06-delete-warning');
    await ui.page.getByRole('button', { name: 'Keep it' }).click();
    expect((await manage('GET', `/media/${item.id}`)).status).toBe(200);
    await ui.page.getByRole('button', { name: 'Delete', exact: true }).click();
    await ui.page.getByRole('button', { name: 'Delete anyway' }).click();
    await expect.poll(() => ui.page.locator('#details').isHidden(), SLOW).toBe(true);
    expect((await manage('GET', `/media/${item.id}`)).status).toBe(404);
    await expect.poll(() => ui.page.locator('#media-grid li').count(), SLOW).toBe(2);
  });

  it('shows a viewer no upload, save, replace or delete control, and the API refuses them anyway', STEP, async () => {
    const context = await ui.browser.newContext({ viewport: { width: 1200, height: 900 } });
    const other = await context.newPage();
    other.on('pageerror', (error) => ui.problems.push(`pageerror: ${error.message}`));
    await signIn(other, viewer);
    await expect.poll(() => other.locator('#media-grid li').count(), SLOW).toBe(2);
    expect(await other.locator('#upload-section').isHidden()).toBe(true);
    await other.getByRole('button', { name: 'Details of dropped.png' }).click();
    for (const name of ['Save details', 'Delete']) expect(await other.getByRole('button', { name, exact: true }).count()).toBe(0);
    expect(await other.getByLabel('Replace file').isHidden()).toBe(true);
    const id = (await byName('dropped.png')).id;
    const status = await other.evaluate(async (mediaId) => {
      const res = await fetch(`/api/media/${mediaId}`, { method: 'DELETE', credentials: 'same-origin' });
      return res.status;
    }, id);
    expect(status).toBe(403);
    expect((await manage('GET', `/media/${id}`)).status).toBe(200);
    expect(await axeProblems(other)).toEqual([]);
    await other.screenshot({ path: `${SCREENSHOTS}/media-07-viewer.png`, fullPage: true });
    await context.close();
  });

  it('saw no console error, uncaught exception or CSP violation', () => {
    expect(ui.problems).toEqual([]);
  });
});
