import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError, UnauthorizedError } from '../core/errors.ts';
import { createSecretBox } from '../core/secret-box.ts';
import { secretDigest } from '../core/text.ts';
import type { Config } from '../core/config.ts';
import { accessCollections, type UserDoc } from './model.ts';
import { matchTotp, newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, otpauthUrl } from './totp.ts';
import { accessChanged } from './access-change.ts';
import { verifyPassword } from './passwords.ts';
import { readAccessState } from './site-settings-store.ts';

/**
 * Two-factor sign-in (docs/accounts.md): a TOTP seed per account, sealed at rest, with ten
 * recovery codes stored hashed. Enrolment is two steps — `enroll` shows the seed and the codes
 * once, `confirm` switches it on with a first code — so a mistyped seed locks nobody out.
 * Required for platform operators and, when the site's `accounts.twoFactor` is `required`, for
 * every user of the site: their session can only enrol until it is on (session-auth.ts).
 */
const totpBox = (config: Pick<Config, 'SECRET_KEY'>) => createSecretBox(config.SECRET_KEY, 'totp-seeds');
const seedBinding = (user: Pick<UserDoc, 'siteId' | '_id'>) => `${user.siteId}/totp/${user._id}`;

export const hasTwoFactor = (user: Pick<UserDoc, 'totp'>): boolean => Boolean(user.totp?.confirmedAt);

/** Whether the account must have two-factor sign-in on before its session may do anything else. */
export const twoFactorRequiredFor = (user: Pick<UserDoc, 'platformOperator'>, siteRequires: boolean): boolean => user.platformOperator || siteRequires;

/**
 * A sign-in's second factor: a TOTP code of the current step ±1 not used before (the step is
 * recorded with a conditional write, so two requests racing with one code: one wins), or one of
 * the recovery codes, taken out as it is used.
 */
export async function verifySecondFactor(ctx: Pick<OperationContext, 'db' | 'services'>, user: UserDoc, code: string): Promise<boolean> {
  const totp = user.totp;
  if (!totp?.confirmedAt) return false;
  const users = accessCollections(ctx.db).users;
  const compact = code.replace(/\s/g, '');
  if (/^\d{6}$/.test(compact)) {
    const step = matchTotp(totpBox(ctx.services.config).open(totp.sealed, seedBinding(user)), compact, ctx.services.clock.now());
    if (step === null) return false;
    const taken = await users.updateOne({ _id: user._id, siteId: user.siteId, 'totp.lastStep': { $lt: step } }, { $set: { 'totp.lastStep': step } });
    return taken.modifiedCount === 1;
  }
  const hashed = secretDigest(normalizeRecoveryCode(compact));
  const used = await users.updateOne({ _id: user._id, siteId: user.siteId, 'totp.recoveryCodes': hashed }, { $pull: { 'totp.recoveryCodes': hashed } });
  return used.modifiedCount === 1;
}

async function sessionUser(ctx: OperationContext): Promise<UserDoc> {
  if (ctx.principal.kind !== 'user') throw new UnauthorizedError();
  const user = await accessCollections(ctx.db).users.findOne({ _id: ctx.principal.userId, siteId: ctx.site._id });
  if (!user) throw new UnauthorizedError();
  return user;
}

const CodeInput = z.object({ code: z.string().trim().min(6).max(32) });

export const enrollTotpOp = defineOperation({
  id: 'auth.totp.enroll',
  surface: 'admin',
  method: 'POST',
  path: '/auth/totp/enroll',
  summary: 'Start two-factor enrolment: the seed, its otpauth:// URL and ten recovery codes, shown once',
  description:
    'Nothing is required until `POST /auth/totp/confirm` accepts a first code. Enrolling again before confirming replaces the seed; once on, it must be removed first (409).',
  requires: 'authenticated',
  errors: [409],
  audit: { action: 'totp.enrollment.started' },
  input: z.object({}),
  output: z.object({ secret: z.string(), otpauthUrl: z.string(), recoveryCodes: z.array(z.string()) }),
  async handler(ctx) {
    const user = await sessionUser(ctx);
    if (hasTwoFactor(user)) throw new ConflictError('Two-factor sign-in is already on; remove it first');
    const secret = newTotpSecret();
    const recoveryCodes = newRecoveryCodes();
    const totp = {
      sealed: totpBox(ctx.services.config).seal(secret, seedBinding(user)),
      confirmedAt: null,
      lastStep: 0,
      recoveryCodes: recoveryCodes.map((code) => secretDigest(normalizeRecoveryCode(code))),
    };
    // Conditional on it still being off: an enrolment racing a confirmation never replaces a live seed.
    const written = await accessCollections(ctx.db).users.updateOne(
      { _id: user._id, siteId: ctx.site._id, 'totp.confirmedAt': { $in: [null] } },
      { $set: { totp, updatedAt: ctx.services.clock.now() } },
    );
    if (written.matchedCount === 0) throw new ConflictError('Two-factor sign-in is already on; remove it first');
    const issuer = ctx.site.name || ctx.site.domains[0] || 'CMS';
    return { secret, otpauthUrl: otpauthUrl(secret, issuer, user.email), recoveryCodes };
  },
});

export const confirmTotpOp = defineOperation({
  id: 'auth.totp.confirm',
  surface: 'admin',
  method: 'POST',
  path: '/auth/totp/confirm',
  summary: 'Switch two-factor sign-in on with a first code from the authenticator app',
  requires: 'authenticated',
  errors: [409],
  audit: { action: 'totp.enrolled' },
  input: CodeInput,
  output: z.object({ enabled: z.literal(true) }),
  async handler(ctx, { code }) {
    const user = await sessionUser(ctx);
    if (!user.totp) throw new ConflictError('Start the enrolment first (POST /auth/totp/enroll)');
    if (user.totp.confirmedAt) throw new ConflictError('Two-factor sign-in is already on');
    const step = matchTotp(totpBox(ctx.services.config).open(user.totp.sealed, seedBinding(user)), code.replace(/\s/g, ''), ctx.services.clock.now());
    if (step === null) throw new BadRequestError('code: not the current code of this seed');
    const now = ctx.services.clock.now();
    const done = await accessCollections(ctx.db).users.updateOne(
      { _id: user._id, siteId: ctx.site._id, 'totp.sealed': user.totp.sealed, 'totp.confirmedAt': null },
      { $set: { 'totp.confirmedAt': now, 'totp.lastStep': step, updatedAt: now } },
    );
    if (done.modifiedCount === 0) throw new ConflictError('The enrolment changed meanwhile; start again');
    // An account that had to enrol gets its full rights from the next request on, on every gateway.
    await accessChanged(ctx);
    return { enabled: true as const };
  },
});

export const removeTotpOp = defineOperation({
  id: 'auth.totp.remove',
  surface: 'admin',
  method: 'POST',
  path: '/auth/totp/remove',
  summary: 'Switch two-factor sign-in off (current password and a code); refused where it is required',
  description: 'Platform operators, and every user of a site whose `accounts.twoFactor` setting is `required`, cannot switch it off (409).',
  requires: 'authenticated',
  errors: [409],
  audit: { action: 'totp.removed' },
  input: z.object({ password: z.string().min(1).max(512), code: z.string().trim().min(6).max(32) }),
  output: z.object({ enabled: z.literal(false) }),
  async handler(ctx, { password, code }) {
    const user = await sessionUser(ctx);
    if (!hasTwoFactor(user)) throw new ConflictError('Two-factor sign-in is not on');
    const state = await readAccessState(ctx.db, ctx.site._id);
    if (twoFactorRequiredFor(user, state.twoFactorRequired)) throw new ConflictError('Two-factor sign-in is required for this account');
    if (!(await verifyPassword(password, user.passwordHash)) || !(await verifySecondFactor(ctx, user, code)))
      throw new BadRequestError('password or code: not right');
    await accessCollections(ctx.db).users.updateOne(
      { _id: user._id, siteId: ctx.site._id },
      { $unset: { totp: '' }, $set: { updatedAt: ctx.services.clock.now() } },
    );
    await accessChanged(ctx);
    return { enabled: false as const };
  },
});

export const twoFactorOperations = [enrollTotpOp, confirmTotpOp, removeTotpOp];
