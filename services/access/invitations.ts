import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation, type Surface } from '../core/operation.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';
import { actorUserId, systemPrincipal } from '../core/principal.ts';
import { accessCollections, type InvitationDoc } from './model.ts';
import { issueAccountToken, parseAccountToken, accountTokenMatches } from './account-tokens.ts';
import { accountLink, sendAccountMail } from './account-mail.ts';
import { assertRoleExists, createUser, findUserByEmail, normalizeEmail } from './users.ts';
import { assertWithinCeiling, capabilitiesWith } from './grant-ceiling.ts';

/**
 * Invitations (docs/accounts.md): an administrator names an address and a role; the invitee gets a
 * single-use link, valid `INVITATION_TTL_MS`, and chooses their own password. The role is a grant:
 * never beyond what the inviter holds, checked at invitation and at every resend.
 */
export const INVITATION_TTL_MS = 72 * 60 * 60 * 1000;

const InvitationView = z.object({
  id: z.string(),
  email: z.string(),
  role: z.string(),
  state: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  invitedBy: z.string().nullable(),
  sent: z.number(),
  expiresAt: z.string(),
  createdAt: z.string(),
  userId: z.string().nullable(),
});

function toView(ctx: OperationContext, row: InvitationDoc): z.input<typeof InvitationView> {
  const expired = row.state === 'pending' && row.expiresAt.getTime() <= ctx.services.clock.now().getTime();
  return {
    id: row._id,
    email: row.email,
    role: row.role,
    state: expired ? 'expired' : row.state,
    invitedBy: row.invitedBy,
    sent: row.sent,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    userId: row.userId,
  };
}

async function assertRoleWithinCeiling(ctx: OperationContext, role: string): Promise<void> {
  await assertRoleExists(ctx, role);
  assertWithinCeiling(await capabilitiesWith(ctx.db, ctx.site._id, role, {}, false), ctx.principal);
}

async function mailInvitation(ctx: OperationContext, row: InvitationDoc, token: string): Promise<void> {
  const inviter = row.invitedBy ? await accessCollections(ctx.db).users.findOne({ _id: row.invitedBy, siteId: ctx.site._id }) : null;
  await sendAccountMail(ctx, {
    key: `invitation:${row._id}:${row.sent}`,
    template: 'invitation',
    to: row.email,
    data: {
      inviterName: inviter?.name ?? ctx.site.name,
      role: row.role,
      acceptUrl: accountLink(ctx, 'accept-invitation', token),
      expiresInHours: String(Math.round(INVITATION_TTL_MS / 3_600_000)),
    },
  });
}

const twin = (surface: Surface, id: string) => (surface === 'manage' ? `users.invitations.${id}` : `users.admin.invitations.${id}`);
const IdInput = z.object({ id: z.string().min(1).max(64) });

const defineCreate = (surface: Surface) =>
  defineOperation({
    id: twin(surface, 'create'),
    surface,
    method: 'POST',
    path: '/users/invitations',
    summary: 'Invite someone by e-mail to a role; they choose their password through a single-use link (72 h)',
    description:
      'The role must be within what the caller holds (403 otherwise, nothing written). An address that already has an account or a pending invitation is a 409 (resend that one).',
    requires: 'users:manage',
    errors: [409],
    status: 201,
    audit: { action: 'invitation.created', kind: 'invitations' },
    input: z.object({ email: z.email().max(254), role: z.string().min(1).max(64).default('viewer') }).strict(),
    output: InvitationView,
    async handler(ctx, input) {
      await assertRoleWithinCeiling(ctx, input.role);
      const email = normalizeEmail(input.email);
      if (await findUserByEmail(ctx, email)) throw new ConflictError('A user with this email exists');
      const invitations = accessCollections(ctx.db).invitations;
      const now = ctx.services.clock.now();
      if (await invitations.findOne({ siteId: ctx.site._id, email, state: 'pending', expiresAt: { $gt: now } })) {
        throw new ConflictError('This address has a pending invitation; resend it');
      }
      const { id, token, secretHash } = issueAccountToken(now);
      const row: InvitationDoc = {
        _id: id,
        siteId: ctx.site._id,
        email,
        role: input.role,
        invitedBy: actorUserId(ctx.principal),
        secretHash,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        state: 'pending',
        sent: 1,
        userId: null,
        createdAt: now,
        updatedAt: now,
      };
      await invitations.insertOne(row);
      await mailInvitation(ctx, row, token);
      return toView(ctx, row);
    },
  });

const defineList = (surface: Surface) =>
  defineOperation({
    id: twin(surface, 'list'),
    surface,
    method: 'GET',
    path: '/users/invitations',
    summary: 'Invitations, oldest first (state: pending, accepted, revoked or expired)',
    requires: 'users:read',
    input: z.object(PageQuery),
    output: pageEnvelope(InvitationView),
    async handler(ctx, query) {
      const { rows, page } = await pageById(ctx, 'invitations', accessCollections(ctx.db).invitations, { siteId: ctx.site._id }, query);
      return { data: rows.map((row) => toView(ctx, row)), page };
    },
  });

async function pendingInvitation(ctx: OperationContext, id: string): Promise<InvitationDoc> {
  const row = await accessCollections(ctx.db).invitations.findOne({ _id: id, siteId: ctx.site._id });
  if (!row) throw new NotFoundError();
  if (row.state !== 'pending') throw new ConflictError(`The invitation is ${row.state}`);
  return row;
}

const defineResend = (surface: Surface) =>
  defineOperation({
    id: twin(surface, 'resend'),
    surface,
    method: 'POST',
    path: '/users/invitations/:id/resend',
    summary: 'Send the invitation again with a new link (the previous link stops working) and a new expiry',
    requires: 'users:manage',
    errors: [409],
    audit: { action: 'invitation.resent', kind: 'invitations' },
    input: IdInput,
    output: InvitationView,
    async handler(ctx, { id }) {
      const row = await pendingInvitation(ctx, id);
      await assertRoleWithinCeiling(ctx, row.role);
      const now = ctx.services.clock.now();
      // A new secret for the same row: the previous link stops working.
      const { token, secretHash } = issueAccountToken(now, id);
      const updated = await accessCollections(ctx.db).invitations.findOneAndUpdate(
        { _id: id, siteId: ctx.site._id, state: 'pending', sent: row.sent },
        { $set: { secretHash, expiresAt: new Date(now.getTime() + INVITATION_TTL_MS), updatedAt: now }, $inc: { sent: 1 } },
        { returnDocument: 'after' },
      );
      if (!updated) throw new ConflictError('The invitation changed meanwhile');
      await mailInvitation(ctx, updated, token);
      return toView(ctx, updated);
    },
  });

const defineRevoke = (surface: Surface) =>
  defineOperation({
    id: twin(surface, 'revoke'),
    surface,
    method: 'DELETE',
    path: '/users/invitations/:id',
    summary: 'Revoke a pending invitation: its link stops working',
    requires: 'users:manage',
    errors: [409],
    audit: { action: 'invitation.revoked', kind: 'invitations' },
    input: IdInput,
    output: InvitationView,
    async handler(ctx, { id }) {
      const row = await pendingInvitation(ctx, id);
      await assertRoleWithinCeiling(ctx, row.role);
      const updated = await accessCollections(ctx.db).invitations.findOneAndUpdate(
        { _id: id, siteId: ctx.site._id, state: 'pending' },
        { $set: { state: 'revoked', updatedAt: ctx.services.clock.now() } },
        { returnDocument: 'after' },
      );
      if (!updated) throw new ConflictError('The invitation changed meanwhile');
      return toView(ctx, updated);
    },
  });

/** Every bad token answers the same: no telling a used link from a revoked, expired or made-up one. */
const badToken = () => new BadRequestError('token: invalid or expired');

export const acceptInvitationOp = defineOperation({
  id: 'auth.invitations.accept',
  surface: 'admin',
  method: 'POST',
  path: '/auth/invitations/accept',
  summary: 'Accept an invitation: choose a password; the account is created with the invited role (then sign in)',
  description: 'A used, revoked, expired or unknown token is the same 400 and creates nothing.',
  requires: 'public',
  errors: [409],
  rateLimit: { perMinute: 10, by: 'ip' },
  audit: { action: 'invitation.accepted', kind: 'users' },
  input: z.object({ token: z.string().min(1).max(200), password: z.string().min(12).max(512), name: z.string().trim().min(1).max(200).optional() }).strict(),
  output: z.object({ id: z.string(), email: z.string(), role: z.string() }),
  async handler(ctx, { token, password, name }) {
    const parsed = parseAccountToken(token);
    if (!parsed) throw badToken();
    const invitations = accessCollections(ctx.db).invitations;
    const row = await invitations.findOne({ _id: parsed.id, siteId: ctx.site._id });
    const now = ctx.services.clock.now();
    if (!row || !accountTokenMatches(parsed.secret, row.secretHash) || row.state !== 'pending' || row.expiresAt.getTime() <= now.getTime()) throw badToken();
    // Taken first, conditionally: of two racing accepts one wins, the other finds it used.
    const taken = await invitations.findOneAndUpdate(
      { _id: row._id, siteId: ctx.site._id, state: 'pending', secretHash: row.secretHash },
      { $set: { state: 'accepted', updatedAt: now } },
    );
    if (!taken) throw badToken();
    try {
      // The role was checked against the inviter's rights when the invitation was made or resent.
      const user = await createUser(
        { ...ctx, principal: systemPrincipal('invitation accepted') },
        { email: row.email, name, password, role: row.role, policy: {} },
      );
      await invitations.updateOne({ _id: row._id }, { $set: { userId: user._id } });
      return { id: user._id, email: user.email, role: user.role };
    } catch (error) {
      await invitations.updateOne({ _id: row._id, state: 'accepted', userId: null }, { $set: { state: 'pending', updatedAt: now } });
      throw error;
    }
  },
});

export const invitationOperations = [
  defineCreate('manage'),
  defineList('manage'),
  defineResend('manage'),
  defineRevoke('manage'),
  defineCreate('admin'),
  defineList('admin'),
  defineResend('admin'),
  defineRevoke('admin'),
  acceptInvitationOp,
];
