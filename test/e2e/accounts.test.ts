import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser, SCREENSHOTS } from './browser.ts';
import { startWorld, type World } from '../support/world.ts';
import { linkIn, startSmtpSink } from '../support/smtp-sink.ts';
import { eventually } from '../support/polling.ts';
import { totpCode, totpStep } from '../../services/access/totp.ts';

const SLOW = { timeout: 60_000 };
const STEP = { timeout: 240_000 };

/**
 * The account pages in the real browser against a real gateway, worker and SMTP server on
 * loopback: an operator without two-factor sign-in lands on the account page and enrols (codes
 * computed here), sees and ends sessions, invites someone who accepts through the mailed link,
 * who then resets their password through the reset pages. One ordered story on one page.
 */
describe('account pages in Chromium', () => {
  let world: World;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let browser: Browser;
  let page: Page;
  let base: string;
  let seed = '';
  const problems: string[] = [];
  const invitee = { email: 'newbie@accounts.example.test', password: 'a-brand-new-password' };

  beforeAll(async () => {
    sink = await startSmtpSink();
    world = await startWorld({ worker: true, env: { SMTP_URL: sink.url } });
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(world.app.server.address() as AddressInfo).port}`;
    // 401: the signed-out check of the sign-in page; 400: the refused reuse of a link, shown on the page.
    ({ browser, page } = await openAdminBrowser(problems, { expectedConsole: /status of (400|401)\b/ }));
  });

  afterAll(async () => {
    await browser?.close();
    await world?.close();
    await sink?.stop();
  });

  const ready = () => page.locator('body[data-ready]').waitFor({ state: 'attached' });
  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/accounts-${name}.png`, fullPage: true });
  const code = (offset = 0) => totpCode(seed, totpStep(new Date()) + offset);
  /** A mailed link on this gateway (the mail names the site's origin; the test listens on a free port). */
  const local = (url: string) => `${base}${new URL(url).pathname}${new URL(url).search}`;
  const mailTo = (address: string, n = 1) => eventually(() => sink.to(address)[n - 1], `mail #${n} to ${address}`, 60_000);

  it('sends an operator without two-factor sign-in to the account page, where it enrols', STEP, async () => {
    await page.goto(`${base}/admin`);
    await ready();
    await page.getByLabel('Email').fill(world.admin.email);
    await page.getByLabel('Password').fill(world.admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/admin/account`);
    await ready();
    expect(await page.locator('#twofactor-pending').isVisible()).toBe(true);
    // Every other page sends it back here.
    await page.goto(`${base}/admin/platform`);
    await page.waitForURL(`${base}/admin/account`);
    await ready();

    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await page.locator('#enrolment').waitFor({ state: 'visible' });
    const url = await page.getByLabel('Authenticator link (otpauth)').inputValue();
    seed = await page.getByLabel('Key', { exact: true }).inputValue();
    expect(url).toContain(`secret=${seed}`);
    expect(await page.getByRole('list', { name: 'Recovery codes' }).locator('li').count()).toBe(10);
    await shot('01-enrol');
    await page.getByLabel('Code from the app').fill(code());
    await page.getByRole('button', { name: 'Switch on' }).click();
    await expect.poll(() => page.locator('#twofactor-state').textContent(), SLOW).toBe('On: signing in asks for a code from your app.');
    expect(await page.locator('#enrolment').isHidden()).toBe(true);
    expect(await page.locator('#twofactor-pending').isHidden()).toBe(true);
    // With the second factor on, the console opens.
    await page.goto(`${base}/admin/platform`);
    await ready();
    expect(page.url()).toBe(`${base}/admin/platform`);
  });

  it('lists the sessions and ends the others', STEP, async () => {
    const other = await world.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { origin: 'http://localhost', 'user-agent': 'Mozilla/5.0 (Linux; Android 14) Chrome/130.0' },
      payload: { email: world.admin.email, password: world.admin.password, code: code(1) },
    });
    expect(other.statusCode).toBe(200);
    await page.goto(`${base}/admin/account`);
    await ready();
    await expect.poll(() => page.locator('#sessions tr').count(), SLOW).toBe(2);
    expect(await page.locator('#sessions').textContent()).toContain('(this session)');
    expect(await page.getByRole('button', { name: /^End session Chrome on Android/ }).count()).toBe(1);
    await shot('02-sessions');
    await page.getByRole('button', { name: 'End all other sessions' }).click();
    await expect.poll(() => page.locator('#sessions-status').textContent(), SLOW).toBe('One other session ended.');
    await expect.poll(() => page.locator('#sessions tr').count(), SLOW).toBe(1);
    const cookie = String(other.headers['set-cookie']).split(';')[0];
    expect((await world.app.inject({ url: '/api/auth/me', headers: { cookie } })).statusCode).toBe(401);
  });

  it('invites by e-mail, resends and revokes; the invitee accepts through the mailed link', STEP, async () => {
    await page.getByRole('link', { name: 'Users' }).first().click();
    await page.waitForURL(`${base}/admin/users`);
    await ready();
    await page.getByLabel('Email').fill('nobody-after-all@accounts.example.test');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.locator('#invite-status').textContent(), SLOW).toBe('Invitation sent to nobody-after-all@accounts.example.test.');
    await page.getByRole('button', { name: 'Revoke invitation of nobody-after-all@accounts.example.test' }).click();
    await expect.poll(() => page.locator('#invitations tr', { hasText: 'nobody-after-all' }).locator('td').nth(2).textContent(), SLOW).toBe('revoked');

    await page.getByLabel('Email').fill(invitee.email);
    await page.getByLabel('Role').selectOption('editor');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.locator('#invite-status').textContent(), SLOW).toBe(`Invitation sent to ${invitee.email}.`);
    // The first mail is in before the resend: mails of one address may otherwise arrive in any order.
    const first = linkIn(await mailTo(invitee.email, 1), 'accept-invitation');
    await page.getByRole('button', { name: `Resend invitation of ${invitee.email}` }).click();
    await expect.poll(() => page.locator('#invitations tr', { hasText: invitee.email }).locator('td').nth(4).textContent(), SLOW).toBe('2');
    await shot('03-invitations');
    const second = linkIn(await mailTo(invitee.email, 2), 'accept-invitation');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/admin`);
    // The first link stopped working when the invitation was resent.
    await page.goto(local(first.url));
    await ready();
    expect(new URL(page.url()).search).toBe('');
    await page.getByLabel('Choose a password').fill(invitee.password);
    await page.getByLabel('Repeat the password').fill(invitee.password);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await expect.poll(() => page.locator('#accept-error').textContent(), SLOW).toBe('token: invalid or expired');

    await page.goto(local(second.url));
    await ready();
    await page.getByLabel('Your name (optional)').fill('New Bie');
    await page.getByLabel('Choose a password').fill(invitee.password);
    await page.getByLabel('Repeat the password').fill(invitee.password);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await expect
      .poll(async () => (await page.locator('#accept-status').textContent()) || `error: ${await page.locator('#accept-error').textContent()}`, SLOW)
      .toBe(`Your account ${invitee.email} is ready. Sign in with your new password.`);
    await shot('04-accepted');
  });

  it('resets a forgotten password through the mailed link, then signs in with it', STEP, async () => {
    await page.goto(`${base}/admin`);
    await ready();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL(`${base}/admin/reset-password`);
    await ready();
    await page.getByLabel('Email').fill(invitee.email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await expect.poll(() => page.locator('#reset-status').textContent(), SLOW).toMatch(/^If this address has an account, a link is on its way/);
    const link = linkIn(
      await eventually(() => sink.to(invitee.email).find((mail) => mail.subject.startsWith('Reset')), 'the reset mail', 60_000),
      'reset-password',
    );

    await page.goto(local(link.url));
    await ready();
    await page.getByLabel('New password (at least 12 characters)').fill('an-even-newer-password');
    await page.getByLabel('Repeat the new password').fill('an-even-newer-password');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expect.poll(() => page.locator('#reset-status').textContent(), SLOW).toMatch(/^Your password is changed/);
    await shot('05-reset');

    await page.getByRole('link', { name: 'Sign in' }).click();
    await ready();
    await page.getByLabel('Email').fill(invitee.email);
    await page.getByLabel('Password').fill('an-even-newer-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#dashboard').waitFor({ state: 'visible' });
    expect(await page.locator('#dashboard-role').textContent()).toBe('editor');
    expect(problems).toEqual([]);
  });
});
