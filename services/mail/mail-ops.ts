import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../core/errors.ts';
import { pageById, pageEnvelope, PageQuery } from '../core/paging.ts';
import { mailCollection, type MailDoc } from './model.ts';
import { startMailWorkflow } from './outbox.ts';

const MailView = z.object({
  id: z.string(),
  template: z.string(),
  to: z.string(),
  subject: z.string(),
  state: z.enum(['queued', 'retrying', 'sent', 'failed']),
  attempts: z.number(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  sentAt: z.string().nullable(),
});

/** The row as administrators see it: never the body (it may hold a single-use link). */
const toView = (mail: MailDoc): z.input<typeof MailView> => ({
  id: mail._id,
  template: mail.template,
  to: mail.to,
  subject: mail.subject,
  state: mail.state,
  attempts: mail.attempts,
  lastError: mail.lastError,
  createdAt: mail.createdAt.toISOString(),
  sentAt: mail.sentAt?.toISOString() ?? null,
});

const StateFilter = z.enum(['queued', 'retrying', 'sent', 'failed']).optional();

export const listMailsOp = defineOperation({
  id: 'mails.list',
  surface: 'manage',
  method: 'GET',
  path: '/mails',
  summary: 'Outgoing mails of the site with their delivery state (oldest first; never their bodies)',
  requires: 'site:admin',
  input: z.object({ ...PageQuery, state: StateFilter }),
  output: pageEnvelope(MailView),
  async handler(ctx, { state, ...query }) {
    const { rows, page } = await pageById(ctx, 'mails', mailCollection(ctx.db), { siteId: ctx.site._id, ...(state ? { state } : {}) }, query);
    return { data: rows.map(toView), page };
  },
});

export const retryMailOp = defineOperation({
  id: 'mails.retry',
  surface: 'manage',
  method: 'POST',
  path: '/mails/:id/retry',
  summary: 'Start the delivery of a queued or failed mail again (a sent mail is never sent twice: 409)',
  requires: 'site:admin',
  errors: [409],
  input: z.object({ id: z.string().min(1).max(64) }),
  output: MailView,
  async handler(ctx, { id }) {
    const mails = mailCollection(ctx.db);
    const mail = await mails.findOne({ _id: id, siteId: ctx.site._id });
    if (!mail) throw new NotFoundError();
    if (mail.state === 'sent') throw new ConflictError('The mail was sent');
    const retried = await mails.findOneAndUpdate(
      { _id: id, siteId: ctx.site._id, state: { $ne: 'sent' } },
      { $set: { state: mail.state === 'failed' ? 'queued' : mail.state, updatedAt: ctx.services.clock.now() } },
      { returnDocument: 'after' },
    );
    if (!retried) throw new ConflictError('The mail was sent');
    if (!(await startMailWorkflow(ctx, retried))) {
      throw new ServiceUnavailableError('The mail could not be handed to the worker; it stays queued');
    }
    return toView(retried);
  },
});

export const mailOperations = [listMailsOp, retryMailOp];
