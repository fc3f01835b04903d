import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser, SCREENSHOTS } from './browser.ts';
import { startWorld, type World } from '../support/world.ts';
import { signIn, signInCode } from '../support/access.ts';
import { startHookReceiver, type HookReceiver } from './receiver.ts';
import { eventually } from '../support/polling.ts';

/** Password hashing and the worker may be slow on a busy CI machine. */
const SLOW = { timeout: 60_000 };
const STEP = { timeout: 240_000 };

/**
 * The real browser against the real gateway: sign in, switch the Management API on, create a key
 * and use its shown-once secret, revoke it, then register a webhook endpoint and redeliver.
 * Steps share one browser page, so the file is one ordered story.
 */
describe('admin UI in Chromium', () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let base: string;
  let receiver: HookReceiver;
  /** Console errors and uncaught exceptions, CSP violations included: none are expected. */
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startWorld({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(world.app.server.address() as AddressInfo).port}`;
    receiver = await startHookReceiver();
    // Revoke, delete and rotate ask for confirmation: the page accepts dialogs.
    ({ browser, page } = await openAdminBrowser(problems));
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await world?.close();
  });

  /** Waits for the page module's first fetches (`<body data-ready>`). */
  const ready = () => page.locator('body[data-ready]').waitFor({ state: 'attached' });
  /** A status line's text, or else its section's error line: a failure then says what went wrong. */
  const statusOr = (status: string, error: string) => async () =>
    (await page.locator(status).textContent()) || `error: ${await page.locator(error).textContent()}`;
  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  const manageHealth = (key: string) => world.app.inject({ method: 'GET', url: '/api/manage/v1/health', headers: { authorization: `Bearer ${key}` } });

  it('signs in and shows the dashboard', STEP, async () => {
    await page.goto(`${base}/admin`);
    await ready();
    await shot('01-sign-in');

    await page.getByLabel('Email').fill(world.admin.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#sign-in-error').textContent(), SLOW).toBe('Wrong email, password or code.');

    // The administrator is a platform operator: two-factor sign-in is on (the helper enrolled it).
    await page.getByLabel('Password').fill(world.admin.password);
    await page.getByLabel('Two-factor code').fill(await signInCode(world));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#dashboard').waitFor({ state: 'visible' });
    expect(await page.locator('#dashboard-user').textContent()).toBe(world.admin.email);
    await shot('02-dashboard');
  });

  let secret = '';

  it('switches the Management API on and creates a key whose secret is shown once and works', STEP, async () => {
    await page.getByRole('link', { name: 'API keys' }).first().click();
    await page.waitForURL(`${base}/admin/api-keys`);
    await ready();

    const enabled = page.getByLabel('Management API enabled');
    expect(await enabled.isChecked()).toBe(false);
    await enabled.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(statusOr('#settings-status', '#settings-error'), SLOW).toContain('Management API is on');

    await page.getByLabel('Name').fill('e2e <b>key</b>');
    await page.locator('#capabilities input[value="content:read"]').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect
      .poll(async () => (await page.locator('#secret-value').inputValue()) || `error: ${await page.locator('#create-error').textContent()}`, SLOW)
      .toMatch(/^svk_/);
    secret = await page.locator('#secret-value').inputValue();
    // The name went in as text, not markup.
    await page.locator('#keys td', { hasText: 'e2e <b>key</b>' }).waitFor();
    await shot('03-api-key-created');

    expect((await manageHealth(secret)).statusCode).toBe(200);
    const content = await world.app.inject({ method: 'GET', url: '/api/manage/v1/content', headers: { authorization: `Bearer ${secret}` } });
    expect(content.statusCode).toBe(200);
  });

  it('shows the secret nowhere after a reload; revoking cuts the key off', STEP, async () => {
    await page.reload();
    await ready();
    const row = page.locator('#keys tr', { hasText: 'e2e <b>key</b>' });
    await row.waitFor();
    expect(await page.locator('#secret-panel').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#secret-value').inputValue()).toBe('');
    expect(await page.getByLabel('Management API enabled').isChecked()).toBe(true);

    // Rotation shows a new secret once; the old one stops working at once.
    await row.getByRole('button', { name: 'Rotate' }).click();
    await expect.poll(() => page.locator('#secret-value').inputValue(), SLOW).not.toBe('');
    const rotated = await page.locator('#secret-value').inputValue();
    expect(rotated).toMatch(/^svk_/);
    expect(rotated).not.toBe(secret);
    expect((await manageHealth(secret)).statusCode).toBe(401);
    expect((await manageHealth(rotated)).statusCode).toBe(200);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(rotated);
    secret = rotated;

    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.locator('td').nth(2).textContent(), SLOW).toBe('revoked');
    expect((await manageHealth(secret)).statusCode).toBe(401);
    expect(await page.content()).not.toContain(secret);
    await shot('04-api-key-revoked');

    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    await page.locator('#keys-empty').waitFor({ state: 'visible' });
  });

  it('registers a webhook endpoint (secret once), lists it, and redelivers from the history', STEP, async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(`${base}/admin/webhooks`);
    await ready();
    await shot('05-webhooks-empty');

    await page.getByLabel('Name').fill('Local receiver');
    await page.getByLabel('URL').fill(receiver.url);
    await page.locator('#events input[value="auth.login"]').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#secret-panel').waitFor({ state: 'visible' });
    const signing = await page.locator('#secret-value').inputValue();
    expect(signing).toMatch(/^whsec_/);
    const row = page.locator('#endpoints tr', { hasText: 'Local receiver' });
    await row.waitFor();
    expect(await row.textContent()).toContain(receiver.url);

    // A sign-in emits auth.login, which the worker delivers to the receiver.
    await signIn(world);
    await eventually(() => receiver.received.length >= 1, 'the first delivery', 90_000);
    const history = page.locator('#history tr', { hasText: 'auth.login' });
    await eventually(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return (await history.count()) >= 1;
      },
      'the delivery in the history',
      60_000,
    );
    await shot('06-webhooks-history');

    await history.first().getByRole('button', { name: 'Redeliver' }).click();
    await eventually(() => receiver.received.length >= 2, 'the redelivery', 90_000);
    const [first, second] = receiver.received;
    expect(second.headers['x-service-delivery']).not.toBe(first.headers['x-service-delivery']);
    expect(JSON.parse(second.body).event).toBe('auth.login');

    await page.reload();
    await ready();
    const listed = page.locator('#endpoints tr', { hasText: 'Local receiver' });
    await listed.waitFor();
    expect(await page.content()).not.toContain(signing);

    await listed.getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(() => page.locator('#secret-value').inputValue(), SLOW).toMatch(/^whsec_/);
    expect(await page.locator('#secret-value').inputValue()).not.toBe(signing);
    await listed.getByRole('button', { name: 'Delete' }).click();
    await listed.waitFor({ state: 'detached' });
    await page.locator('#endpoints-empty').waitFor({ state: 'visible' });
  });

  it('signs out; a signed-out page sends to sign-in and back, never to another origin', STEP, async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/admin`);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await page.goto(`${base}/admin/api-keys`);
    await page.waitForURL(/\/admin\?next=%2Fadmin%2Fapi-keys$/);
    await page.getByLabel('Email').fill(world.admin.email);
    await page.getByLabel('Password').fill(world.admin.password);
    await page.getByLabel('Two-factor code').fill(await signInCode(world));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/admin/api-keys`);

    for (const next of ['https://evil.example/', '//evil.example/x', '/\\evil.example/x']) {
      await page.goto(`${base}/admin?next=${encodeURIComponent(next)}`);
      await page.locator('#dashboard').waitFor({ state: 'visible' });
      expect(new URL(page.url()).origin).toBe(base);
    }
  });

  it('raised no console error, uncaught exception or CSP violation', () => {
    // The 401s of the deliberate wrong password and of the signed-out checks are expected.
    expect(problems.filter((line) => !/status of 401/.test(line))).toEqual([]);
  });
});
