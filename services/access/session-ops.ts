import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation, type Surface } from '../core/operation.ts';
import { NotFoundError, UnauthorizedError } from '../core/errors.ts';
import { secretDigest } from '../core/text.ts';
import { accessCollections, type SessionDoc } from './model.ts';
import { describeDevice } from './device.ts';
import { assertAccountInReach } from './grant-ceiling.ts';

/**
 * A user's own sessions (docs/accounts.md). A session's row id is the digest of its cookie; what
 * the list shows is a digest of that again, so nothing listed can be turned back into a row key.
 */
export const publicSessionId = (session: Pick<SessionDoc, '_id'>) => secretDigest(`session:${session._id}`).slice(0, 22);

const SessionView = z.object({
  id: z.string(),
  device: z.string(),
  userAgent: z.string().nullable(),
  ip: z.string().nullable(),
  createdAt: z.string(),
  lastSeenAt: z.string().nullable(),
  expiresAt: z.string(),
  current: z.boolean(),
});

function ownSession(ctx: OperationContext) {
  if (ctx.principal.kind !== 'user') throw new UnauthorizedError();
  return { userId: ctx.principal.userId, sessionId: ctx.principal.sessionId };
}

const liveSessions = (ctx: OperationContext, userId: string) =>
  accessCollections(ctx.db)
    .sessions.find({ siteId: ctx.site._id, userId, expiresAt: { $gt: ctx.services.clock.now() } })
    .sort({ createdAt: -1 })
    .limit(200)
    .toArray();

export const listSessionsOp = defineOperation({
  id: 'auth.sessions.list',
  surface: 'admin',
  method: 'GET',
  path: '/auth/sessions',
  summary: "The signed-in user's live sessions: device (from User-Agent), address, created, last seen, which is this one",
  requires: 'authenticated',
  input: z.object({}),
  output: z.object({ data: z.array(SessionView) }),
  async handler(ctx) {
    const { userId, sessionId } = ownSession(ctx);
    const rows = await liveSessions(ctx, userId);
    return {
      data: rows.map((row) => ({
        id: publicSessionId(row),
        device: describeDevice(row.userAgent),
        userAgent: row.userAgent ?? null,
        ip: row.ip ?? null,
        createdAt: row.createdAt.toISOString(),
        lastSeenAt: row.lastSeenAt?.toISOString() ?? null,
        expiresAt: row.expiresAt.toISOString(),
        current: row._id === sessionId,
      })),
    };
  },
});

export const endSessionOp = defineOperation({
  id: 'auth.sessions.end',
  surface: 'admin',
  method: 'DELETE',
  path: '/auth/sessions/:id',
  summary: 'End one of your sessions (this one too: then the cookie is cleared)',
  requires: 'authenticated',
  status: 204,
  audit: { action: 'session.ended', kind: 'sessions' },
  input: z.object({ id: z.string().min(1).max(64) }),
  output: z.void(),
  async handler(ctx, { id }) {
    const { userId, sessionId } = ownSession(ctx);
    const target = (await liveSessions(ctx, userId)).find((row) => publicSessionId(row) === id);
    if (!target) throw new NotFoundError();
    await accessCollections(ctx.db).sessions.deleteOne({ _id: target._id, siteId: ctx.site._id, userId });
    if (target._id === sessionId) ctx.effects.session = 'end';
  },
});

export const endOtherSessionsOp = defineOperation({
  id: 'auth.sessions.endOthers',
  surface: 'admin',
  method: 'POST',
  path: '/auth/sessions/end-others',
  summary: 'End every session of yours but this one',
  requires: 'authenticated',
  audit: { action: 'sessions.ended.others' },
  input: z.object({}),
  output: z.object({ ended: z.number() }),
  async handler(ctx) {
    const { userId, sessionId } = ownSession(ctx);
    const { deletedCount } = await accessCollections(ctx.db).sessions.deleteMany({ siteId: ctx.site._id, userId, _id: { $ne: sessionId } });
    return { ended: deletedCount };
  },
});

/** An administrator ends a user's sessions (a lost laptop): on both surfaces, within the reach rule. */
const defineEndUserSessions = (surface: Surface) =>
  defineOperation({
    id: surface === 'manage' ? 'users.sessions.end' : 'users.admin.sessions.end',
    surface,
    method: 'DELETE',
    path: '/users/:id/sessions',
    summary: 'End every session of a user (they sign in again); the caller must hold every capability the user holds',
    requires: 'users:manage',
    audit: { action: 'users.sessions.ended', kind: 'users' },
    input: z.object({ id: z.string().min(1).max(64) }),
    output: z.object({ id: z.string(), ended: z.number() }),
    async handler(ctx, { id }) {
      const user = await accessCollections(ctx.db).users.findOne({ _id: id, siteId: ctx.site._id });
      if (!user) throw new NotFoundError();
      await assertAccountInReach(ctx, user);
      const { deletedCount } = await accessCollections(ctx.db).sessions.deleteMany({ siteId: ctx.site._id, userId: id });
      if (ctx.principal.kind === 'user' && ctx.principal.userId === id) ctx.effects.session = 'end';
      return { id, ended: deletedCount };
    },
  });

export const sessionOperations = [listSessionsOp, endSessionOp, endOtherSessionsOp, defineEndUserSessions('manage'), defineEndUserSessions('admin')];
