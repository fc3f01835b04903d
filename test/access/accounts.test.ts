import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../support/world.ts';
import { createApiKey, currentCode, siteContext } from '../support/access.ts';
import { eventually } from '../support/polling.ts';
import { linkIn, startSmtpSink } from '../support/smtp-sink.ts';
import { movableClock } from './clock.ts';
import { accessCollections } from '../../services/access/model.ts';
import { createUser } from '../../services/access/users.ts';
import { totpCode, totpStep } from '../../services/access/totp.ts';
import { mailBinding, mailCollection } from '../../services/mail/model.ts';
import { drainQueuedMails } from '../../services/mail/drain.ts';
import { newId } from '../../services/core/ids.ts';
import { CAPABILITIES } from '../../services/core/capabilities.ts';
import { mailWorkflowId } from '../../workflows/contracts/mail.ts';
import { checkHistory } from '../support/histories.ts';

/**
 * Issue 27 end to end on the real engines: the mails go through the outbox, a Temporal worker and
 * a real SMTP conversation with a server on loopback (test/support/smtp-sink.ts).
 */
const clock = movableClock();
let world: World;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let manager: string;
const origin = 'http://localhost';

type Headers = Record<string, string>;
const call = (method: string, url: string, headers: Headers = {}, payload?: unknown) =>
  world.app.inject({ method: method as 'GET', url, headers: { origin, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
const asKey = (method: string, url: string, payload?: unknown) => call(method, `/api/manage/v1${url}`, { authorization: `Bearer ${manager}` }, payload);
const withCookie = (cookie: string, headers: Headers = {}) => ({ cookie, ...headers });

async function login(email: string, password: string, extra: Record<string, string> = {}, headers: Headers = {}) {
  const response = await call('POST', '/api/auth/login', headers, { email, password, ...extra });
  const line = response.headers['set-cookie'];
  const cookie = (Array.isArray(line) ? line[0] : (line ?? '')).split(';')[0];
  return { response, cookie };
}

async function mailTo(address: string, count = 1) {
  return eventually(() => (sink.to(address).length >= count ? sink.to(address)[count - 1] : undefined), `mail #${count} to ${address}`, 60_000);
}

async function counts() {
  const ctx = await siteContext(world);
  const { users, invitations, passwordResets } = accessCollections(ctx.db);
  const [u, i, r, m] = await Promise.all([
    users.countDocuments({}),
    invitations.countDocuments({}),
    passwordResets.countDocuments({}),
    mailCollection(ctx.db).countDocuments({}),
  ]);
  return { users: u, invitations: i, resets: r, mails: m };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  world = await startWorld({ worker: true, clock, env: { SMTP_URL: sink.url, MAIL_FROM: 'cms@example.test' } });
  // Inviting to a role needs every capability of the role (grant ceiling): the manager key holds a site administrator's.
  ({ key: manager } = await createApiKey(world, { capabilities: [...CAPABILITIES] }));
}, 120_000);

afterAll(async () => {
  await world?.close();
  await sink?.stop();
});

describe('invitations', () => {
  it('invite → mail over SMTP → accept → sign in; the link works once', async () => {
    const invited = await asKey('POST', '/users/invitations', { email: 'Grace@Example.test', role: 'editor' });
    expect(invited.statusCode, invited.body).toBe(201);
    expect(invited.json()).toMatchObject({ email: 'grace@example.test', role: 'editor', state: 'pending', sent: 1 });

    const mail = await mailTo('grace@example.test');
    expect(mail.subject).toContain('invited you');
    expect(mail.raw).toMatch(/^From: cms@example\.test/m);
    const { token } = linkIn(mail, 'accept-invitation');

    const accepted = await call('POST', '/api/auth/invitations/accept', {}, { token, password: 'a-long-enough-password', name: 'Grace' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ email: 'grace@example.test', role: 'editor' });
    const { response } = await login('grace@example.test', 'a-long-enough-password');
    expect(response.statusCode).toBe(200);
    expect(response.json().user).toMatchObject({ role: 'editor', twoFactor: { enabled: false, required: false, pending: false } });

    // A used link is refused and changes nothing.
    const before = await counts();
    const again = await call('POST', '/api/auth/invitations/accept', {}, { token, password: 'another-long-password' });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: 'token: invalid or expired' });
    expect(await counts()).toEqual(before);
    const listed = (await asKey('GET', '/users/invitations')).json().data;
    expect(listed.find((row: { email: string }) => row.email === 'grace@example.test')).toMatchObject({ state: 'accepted' });
    // The outbox shows the mail as sent, never its body.
    const mails = (await asKey('GET', '/mails')).json().data;
    const row = mails.find((m: { to: string }) => m.to === 'grace@example.test');
    expect(row).toMatchObject({ template: 'invitation', state: 'sent' });
    expect(JSON.stringify(mails)).not.toContain(token.split('.')[1]);
  });

  it('refuses an invitation above the caller (grant ceiling) and bad input, writing nothing', async () => {
    const { key: narrow } = await createApiKey(world, { capabilities: ['users:read', 'users:manage'] });
    const before = await counts();
    const above = await call(
      'POST',
      '/api/manage/v1/users/invitations',
      { authorization: `Bearer ${narrow}` },
      { email: 'boss@example.test', role: 'administrator' },
    );
    expect(above.statusCode).toBe(403);
    expect(above.json()).toEqual({ error: 'Forbidden' });
    const badEmail = await asKey('POST', '/users/invitations', { email: 'not-an-address', role: 'viewer' });
    expect(badEmail.statusCode).toBe(400);
    expect(badEmail.json().error).toMatch(/^email:/);
    const badRole = await asKey('POST', '/users/invitations', { email: 'x@example.test', role: 'no-such-role' });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json()).toEqual({ error: 'role: unknown role' });
    const existing = await asKey('POST', '/users/invitations', { email: world.admin.email, role: 'viewer' });
    expect(existing.statusCode).toBe(409);
    expect(await counts()).toEqual(before);
    const badToken = await call('POST', '/api/auth/invitations/accept', {}, { token: 'nonsense', password: 'a-long-enough-password' });
    expect(badToken.statusCode).toBe(400);
    const shortPassword = await call('POST', '/api/auth/invitations/accept', {}, { token: 'a.b', password: 'short' });
    expect(shortPassword.statusCode).toBe(400);
    expect(shortPassword.json().error).toMatch(/^password:/);
    expect(await counts()).toEqual(before);
  });

  it('resend issues a new link (the old one stops), revoke stops it, and an expired link is refused', async () => {
    const id = (await asKey('POST', '/users/invitations', { email: 'ada@example.test', role: 'author' })).json().id;
    const first = linkIn(await mailTo('ada@example.test', 1), 'accept-invitation').token;
    const resent = await asKey('POST', `/users/invitations/${id}/resend`);
    expect(resent.json()).toMatchObject({ sent: 2, state: 'pending' });
    const second = linkIn(await mailTo('ada@example.test', 2), 'accept-invitation').token;
    expect(second).not.toBe(first);
    expect((await call('POST', '/api/auth/invitations/accept', {}, { token: first, password: 'a-long-enough-password' })).statusCode).toBe(400);
    // The resent link is the live one.
    expect((await call('POST', '/api/auth/invitations/accept', {}, { token: second, password: 'a-long-enough-password' })).statusCode).toBe(200);
    expect((await asKey('DELETE', `/users/invitations/${id}`)).statusCode).toBe(409);

    // A revoked invitation's link stops working.
    const revokedId = (await asKey('POST', '/users/invitations', { email: 'revoked@example.test', role: 'viewer' })).json().id;
    const revokedLink = linkIn(await mailTo('revoked@example.test'), 'accept-invitation').token;
    expect((await asKey('DELETE', `/users/invitations/${revokedId}`)).json()).toMatchObject({ state: 'revoked' });
    const before = await counts();
    expect((await call('POST', '/api/auth/invitations/accept', {}, { token: revokedLink, password: 'a-long-enough-password' })).statusCode).toBe(400);
    expect((await asKey('DELETE', `/users/invitations/${revokedId}`)).statusCode).toBe(409);
    expect(await counts()).toEqual(before);

    await asKey('POST', '/users/invitations', { email: 'late@example.test', role: 'viewer' });
    const late = linkIn(await mailTo('late@example.test'), 'accept-invitation').token;
    clock.advance(73 * 60 * 60 * 1000);
    try {
      const unchanged = await counts();
      const expired = await call('POST', '/api/auth/invitations/accept', {}, { token: late, password: 'a-long-enough-password' });
      expect(expired.statusCode).toBe(400);
      expect(await counts()).toEqual(unchanged);
      const listed = (await asKey('GET', '/users/invitations')).json().data;
      expect(listed.find((row: { email: string }) => row.email === 'late@example.test')).toMatchObject({ state: 'expired' });
    } finally {
      clock.advance(-73 * 60 * 60 * 1000);
    }
  });
});

describe('password reset and change', () => {
  it('reset → sign in with the new password; old sessions gone; the link works once; same answer for unknown addresses', async () => {
    const ctx = await siteContext(world);
    await createUser(ctx, { email: 'reset@example.test', password: 'the-old-password-1', role: 'viewer', policy: {} });
    const sessions = [await login('reset@example.test', 'the-old-password-1'), await login('reset@example.test', 'the-old-password-1')];
    for (const { cookie } of sessions) expect((await call('GET', '/api/auth/me', withCookie(cookie))).statusCode).toBe(200);

    const known = await call('POST', '/api/auth/password-reset', {}, { email: 'reset@example.test' });
    const unknown = await call('POST', '/api/auth/password-reset', {}, { email: 'nobody@example.test' });
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.body).toBe(known.body);

    const { token } = linkIn(await mailTo('reset@example.test'), 'reset-password');
    const done = await call('POST', '/api/auth/password-reset/confirm', {}, { token, password: 'the-new-password-2' });
    expect(done.statusCode, done.body).toBe(200);
    for (const { cookie } of sessions) expect((await call('GET', '/api/auth/me', withCookie(cookie))).statusCode).toBe(401);
    expect((await login('reset@example.test', 'the-old-password-1')).response.statusCode).toBe(401);
    const fresh = await login('reset@example.test', 'the-new-password-2');
    expect(fresh.response.statusCode).toBe(200);

    const reused = await call('POST', '/api/auth/password-reset/confirm', {}, { token, password: 'a-third-password-3' });
    expect(reused.statusCode).toBe(400);
    expect((await login('reset@example.test', 'the-new-password-2')).response.statusCode).toBe(200);
    expect(sink.to('nobody@example.test')).toHaveLength(0);

    // Change with the current password: this session stays, the others end.
    const other = await login('reset@example.test', 'the-new-password-2');
    const wrong = await call('POST', '/api/auth/password', withCookie(fresh.cookie), { currentPassword: 'not-it-at-all', password: 'the-fourth-password' });
    expect(wrong.statusCode).toBe(400);
    const changed = await call('POST', '/api/auth/password', withCookie(fresh.cookie), {
      currentPassword: 'the-new-password-2',
      password: 'the-fourth-password',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await call('GET', '/api/auth/me', withCookie(fresh.cookie))).statusCode).toBe(200);
    expect((await call('GET', '/api/auth/me', withCookie(other.cookie))).statusCode).toBe(401);
  });

  it('an expired reset link is refused, and requests are limited per address', async () => {
    const ctx = await siteContext(world);
    await createUser(ctx, { email: 'slow@example.test', password: 'the-old-password-1', role: 'viewer', policy: {} });
    await call('POST', '/api/auth/password-reset', {}, { email: 'slow@example.test' });
    const { token } = linkIn(await mailTo('slow@example.test'), 'reset-password');
    clock.advance(61 * 60 * 1000);
    try {
      const expired = await call('POST', '/api/auth/password-reset/confirm', {}, { token, password: 'the-new-password-2' });
      expect(expired.statusCode).toBe(400);
      expect((await login('slow@example.test', 'the-old-password-1')).response.statusCode).toBe(200);
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push((await call('POST', '/api/auth/password-reset', {}, { email: 'limited@example.test' })).statusCode);
      expect(answers).toEqual([202, 202, 202, 429]);
    } finally {
      clock.advance(-61 * 60 * 1000);
    }
  });
});

describe('two-factor sign-in', () => {
  it('enrols with codes computed here; sign-in then needs a code, each accepted once, or a recovery code', async () => {
    const ctx = await siteContext(world);
    await createUser(ctx, { email: 'totp@example.test', password: 'totp-password-123', role: 'editor', policy: {} });
    const { cookie } = await login('totp@example.test', 'totp-password-123', {}, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' });
    const enrolled = await call('POST', '/api/auth/totp/enroll', withCookie(cookie));
    expect(enrolled.statusCode, enrolled.body).toBe(200);
    const { secret, otpauthUrl, recoveryCodes } = enrolled.json();
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\/.+\?secret=[A-Z2-7]+&issuer=.+&algorithm=SHA1&digits=6&period=30$/);
    expect(recoveryCodes).toHaveLength(10);
    const code = (offset = 0) => totpCode(secret, totpStep(clock.now()) + offset);
    expect((await call('POST', '/api/auth/totp/confirm', withCookie(cookie), { code: '000000' === code() ? '111111' : '000000' })).statusCode).toBe(400);
    expect((await call('POST', '/api/auth/totp/confirm', withCookie(cookie), { code: code() })).statusCode).toBe(200);

    expect((await login('totp@example.test', 'totp-password-123')).response.statusCode).toBe(401);
    expect((await login('totp@example.test', 'totp-password-123', { code: code(1) })).response.statusCode).toBe(200);
    // The same code again, or an older one: refused.
    expect((await login('totp@example.test', 'totp-password-123', { code: code(1) })).response.statusCode).toBe(401);
    expect((await login('totp@example.test', 'totp-password-123', { code: code(0) })).response.statusCode).toBe(401);
    // A code of a later step, once the clock gets there.
    clock.advance(60_000);
    expect((await login('totp@example.test', 'totp-password-123', { code: code() })).response.statusCode).toBe(200);
    expect((await login('totp@example.test', 'totp-password-123', { code: recoveryCodes[0] })).response.statusCode).toBe(200);
    expect((await login('totp@example.test', 'totp-password-123', { code: recoveryCodes[0] })).response.statusCode).toBe(401);
    expect((await login('totp@example.test', 'wrong-password-xx', { code: recoveryCodes[1] })).response.statusCode).toBe(401);
    const failures = await accessCollections(ctx.db)
      .audit.find({ action: 'login.failed', reason: { $in: ['code-missing', 'bad-code'] } })
      .toArray();
    expect(new Set(failures.map((row) => row.reason))).toEqual(new Set(['code-missing', 'bad-code']));
    const enrolledRow = await accessCollections(ctx.db).audit.findOne({ action: 'totp.enrolled' });
    await world.services.audit.settled();
    expect(enrolledRow ?? (await accessCollections(ctx.db).audit.findOne({ action: 'totp.enrolled' }))).not.toBeNull();
  });

  it('an operator without it is refused on platform routes and can only enrol; with it, gets in', async () => {
    const ctx = await siteContext(world);
    await createUser(ctx, { email: 'op@example.test', password: 'operator-password', role: 'administrator', policy: {}, platformOperator: true });
    const { response, cookie } = await login('op@example.test', 'operator-password');
    expect(response.statusCode).toBe(200);
    expect(response.json().user).toMatchObject({ twoFactor: { enabled: false, required: true, pending: true }, capabilities: [] });
    expect((await call('GET', '/api/platform/tenants', withCookie(cookie))).statusCode).toBe(403);
    expect((await call('GET', '/api/api-keys', withCookie(cookie))).statusCode).toBe(403);
    expect((await call('POST', '/api/api-keys', withCookie(cookie), { name: 'x', capabilities: ['platform:read'] })).statusCode).toBe(403);
    expect((await call('GET', '/api/auth/sessions', withCookie(cookie))).statusCode).toBe(200);

    const { secret } = (await call('POST', '/api/auth/totp/enroll', withCookie(cookie))).json();
    expect((await call('POST', '/api/auth/totp/confirm', withCookie(cookie), { code: totpCode(secret, totpStep(clock.now())) })).statusCode).toBe(200);
    expect((await call('GET', '/api/platform/tenants', withCookie(cookie))).statusCode).toBe(200);
    // Required for operators: it cannot be switched off.
    const off = await call('POST', '/api/auth/totp/remove', withCookie(cookie), {
      password: 'operator-password',
      code: totpCode(secret, totpStep(clock.now()) + 1),
    });
    expect(off.statusCode).toBe(409);

    // The test helpers enrol operators the same way: the world's administrator signs in with a code.
    expect(await currentCode(world, world.admin.email)).toBeUndefined();
  });

  it('a workspace can require it for every user (site setting)', async () => {
    const ctx = await siteContext(world);
    await createUser(ctx, { email: 'member@example.test', password: 'member-password-1', role: 'editor', policy: {} });
    expect((await asKey('PATCH', '/settings', { accounts: { twoFactor: 'sometimes' } })).statusCode).toBe(400);
    expect((await asKey('PATCH', '/settings', { accounts: { twoFactor: 'required' } })).statusCode).toBe(200);
    try {
      const { response, cookie } = await login('member@example.test', 'member-password-1');
      expect(response.json().user.twoFactor).toEqual({ enabled: false, required: true, pending: true });
      expect((await call('GET', '/api/settings', withCookie(cookie))).statusCode).toBe(403);
    } finally {
      await asKey('PATCH', '/settings', { accounts: { twoFactor: 'optional' } });
    }
    const { cookie } = await login('member@example.test', 'member-password-1');
    expect((await call('GET', '/api/settings', withCookie(cookie))).statusCode).toBe(200);
  });
});

describe('sessions', () => {
  it('lists device, address and last seen; ends one or all others; an administrator ends them; disabling ends them at once', async () => {
    const ctx = await siteContext(world);
    const user = await createUser(ctx, { email: 'sessions@example.test', password: 'sessions-password', role: 'viewer', policy: {} });
    const laptop = await login(
      'sessions@example.test',
      'sessions-password',
      {},
      { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) Safari/605.1.15' },
    );
    const phone = await login('sessions@example.test', 'sessions-password', {}, { 'user-agent': 'Mozilla/5.0 (Linux; Android 14) Chrome/130.0' });
    const third = await login('sessions@example.test', 'sessions-password');
    const listed = (await call('GET', '/api/auth/sessions', withCookie(laptop.cookie))).json().data;
    expect(listed).toHaveLength(3);
    const mine = listed.find((s: { current: boolean }) => s.current);
    expect(mine).toMatchObject({ device: 'Safari on macOS', ip: '127.0.0.1' });
    expect(listed.map((s: { device: string }) => s.device)).toContain('Chrome on Android');
    const phoneRow = listed.find((s: { device: string }) => s.device === 'Chrome on Android');
    expect((await call('DELETE', `/api/auth/sessions/${phoneRow.id}`, withCookie(laptop.cookie))).statusCode).toBe(204);
    expect((await call('GET', '/api/auth/me', withCookie(phone.cookie))).statusCode).toBe(401);
    expect((await call('DELETE', `/api/auth/sessions/${phoneRow.id}`, withCookie(laptop.cookie))).statusCode).toBe(404);
    expect((await call('POST', '/api/auth/sessions/end-others', withCookie(laptop.cookie))).json()).toEqual({ ended: 1 });
    expect((await call('GET', '/api/auth/me', withCookie(third.cookie))).statusCode).toBe(401);
    expect((await call('GET', '/api/auth/me', withCookie(laptop.cookie))).statusCode).toBe(200);

    // An administrator ends them.
    expect((await asKey('DELETE', `/users/${user._id}/sessions`)).json()).toEqual({ id: user._id, ended: 1 });
    expect((await call('GET', '/api/auth/me', withCookie(laptop.cookie))).statusCode).toBe(401);

    // Disabling ends them at once and signs in nowhere.
    const again = await login('sessions@example.test', 'sessions-password');
    const disabled = await asKey('PATCH', `/users/${user._id}`, { disabled: true });
    expect(disabled.json()).toMatchObject({ disabled: true });
    expect((await call('GET', '/api/auth/me', withCookie(again.cookie))).statusCode).toBe(401);
    expect((await login('sessions@example.test', 'sessions-password')).response.statusCode).toBe(401);
    await asKey('PATCH', `/users/${user._id}`, { disabled: false });
    expect((await login('sessions@example.test', 'sessions-password')).response.statusCode).toBe(200);
  });
});

describe('the outbox', () => {
  it('an SMTP server that is down then back: the mail is retried, visible meanwhile, and arrives exactly once', async () => {
    await sink.stop();
    try {
      expect((await asKey('POST', '/users/invitations', { email: 'patient@example.test', role: 'viewer' })).statusCode).toBe(201);
      const ctx = await siteContext(world);
      const retrying = await eventually(
        async () => {
          const row = await mailCollection(ctx.db).findOne({ to: 'patient@example.test' });
          return row && row.state === 'retrying' && row.attempts >= 1 ? row : undefined;
        },
        'a failed attempt written on the mail',
        60_000,
      );
      expect(retrying.lastError).toBeTruthy();
      const listed = (await asKey('GET', '/mails?state=retrying')).json().data;
      expect(listed.map((m: { to: string }) => m.to)).toContain('patient@example.test');
    } finally {
      await sink.start();
    }
    await mailTo('patient@example.test');
    const ctx = await siteContext(world);
    const sent = await eventually(async () => {
      const row = await mailCollection(ctx.db).findOne({ to: 'patient@example.test' });
      return row?.state === 'sent' ? row : undefined;
    }, 'the mail marked sent');
    expect(sent.body).toBeNull();
    // Its workflow's history (a failed attempt, then the send) replays on the current code.
    const handle = world.services.temporal.client.workflow.getHandle(mailWorkflowId(world.defaultWorkspace.id, sent._id));
    await handle.result();
    await checkHistory(handle, 'mail-retried');
    // A retry by hand of a sent mail is refused; nothing more arrives.
    expect((await asKey('POST', `/mails/${sent._id}/retry`)).statusCode).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(sink.to('patient@example.test')).toHaveLength(1);
  });

  it('a mail left queued (its workflow never started) is started by the worker drain and arrives once', async () => {
    const ctx = await siteContext(world);
    const now = clock.now();
    const id = newId(now.getTime());
    const body = world.services.mailer.bodies.seal(JSON.stringify({ html: '<p>left</p>', text: 'left' }), mailBinding({ siteId: ctx.site._id, _id: id }));
    await mailCollection(ctx.db).insertOne({
      _id: id,
      siteId: ctx.site._id,
      key: `test:left-queued:${id}`,
      template: 'welcome',
      from: 'cms@example.test',
      to: 'left@example.test',
      subject: 'Left queued',
      body,
      state: 'queued',
      attempts: 0,
      lastError: null,
      createdAt: new Date(now.getTime() - 5 * 60_000),
      updatedAt: new Date(now.getTime() - 5 * 60_000),
      sentAt: null,
    });
    await drainQueuedMails(world.services);
    await mailTo('left@example.test');
    await eventually(async () => (await mailCollection(ctx.db).findOne({ _id: id }))?.state === 'sent', 'the drained mail marked sent');
    await drainQueuedMails(world.services);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(sink.to('left@example.test')).toHaveLength(1);
  });
});
