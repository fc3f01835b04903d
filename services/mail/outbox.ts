import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { OperationContext, Services } from '../core/context.ts';
import { newId } from '../core/ids.ts';
import { findSiteScope } from '../tenancy/platform-db.ts';
import { renderSiteTemplate } from '../email-templates/email-templates.ts';
import { mailWorkflowId, mailWorkflowType, type MailInput } from '../../workflows/contracts/mail.ts';
import { mailBinding, mailCollection, type MailDoc } from './model.ts';

export interface MailRequest {
  /** The event the mail is for (`invitation:<id>:<n>`, `password-reset:<id>`): one mail per key, ever. */
  key: string;
  template: string;
  from: string;
  to: string;
  data: Record<string, string>;
}

/**
 * The durable outbox: the mail is rendered (the site's wording, values escaped in HTML) and written
 * first, under its event's unique key, then its workflow is started. A second request for the same
 * event finds the row and writes nothing. If Temporal cannot be reached the row stays `queued`,
 * listed for administrators and started again by `POST /mails/{id}/retry`: never lost.
 */
export async function queueMail(ctx: OperationContext, request: MailRequest): Promise<MailDoc> {
  const mails = mailCollection(ctx.db);
  const now = ctx.services.clock.now();
  const rendered = await renderSiteTemplate(ctx, request.template, request.data);
  const id = newId(now.getTime());
  const mail: MailDoc = {
    _id: id,
    siteId: ctx.site._id,
    key: request.key,
    template: request.template,
    from: request.from,
    to: request.to,
    subject: rendered.subject,
    body: ctx.services.mailer.bodies.seal(JSON.stringify({ html: rendered.html, text: rendered.text }), mailBinding({ siteId: ctx.site._id, _id: id })),
    state: 'queued',
    attempts: 0,
    lastError: null,
    createdAt: now,
    updatedAt: now,
    sentAt: null,
  };
  try {
    await mails.insertOne(mail);
  } catch (error) {
    if ((error as { code?: number }).code !== 11000) throw error;
    const existing = await mails.findOne({ siteId: ctx.site._id, key: request.key });
    if (existing) return existing;
    throw error;
  }
  await startMailWorkflow(ctx, mail);
  return mail;
}

/** Starts the mail's workflow (one per mail; a running one is left alone). Never throws: the row is the record. */
export async function startMailWorkflow(ctx: Pick<OperationContext, 'services' | 'workspace'>, mail: Pick<MailDoc, '_id' | 'siteId'>): Promise<boolean> {
  const { client, taskQueue } = ctx.services.temporal;
  const input: MailInput = { workspaceId: ctx.workspace._id, siteId: mail.siteId, mailId: mail._id };
  try {
    // By type name (the contract): the workflow module imports the activities, which import this file.
    await client.workflow.start(mailWorkflowType, {
      taskQueue,
      workflowId: mailWorkflowId(ctx.workspace._id, mail._id),
      args: [input],
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return true;
    ctx.services.log.warn(
      { mailId: mail._id, err: error instanceof Error ? error.message : String(error) },
      'mail workflow not started; the mail stays queued',
    );
    return false;
  }
}

async function mailOf(services: Services, input: MailInput) {
  const scope = await findSiteScope(services, input.siteId, input.workspaceId);
  if (!scope) return null;
  const mails = mailCollection(services.workspaceDb(scope.workspace));
  const mail = await mails.findOne({ _id: input.mailId, siteId: input.siteId });
  return mail ? { mails, mail } : null;
}

/**
 * The activity: a mail already sent is not sent again (a retry after the send but before the mark
 * would be the one duplicate left, and SMTP has no way to ask); otherwise it is sent, then marked
 * sent and its body dropped. A failure is written on the row and thrown, so Temporal retries it.
 */
export async function deliverQueuedMail(services: Services, input: MailInput): Promise<void> {
  const found = await mailOf(services, input);
  if (!found || found.mail.state === 'sent' || found.mail.body === null) return;
  const { mails, mail } = found;
  const { html, text } = JSON.parse(services.mailer.bodies.open(mail.body!, mailBinding(mail))) as { html: string; text: string };
  try {
    await services.mailer.send({ id: mail._id, from: mail.from, to: mail.to, subject: mail.subject, html, text });
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    await mails.updateOne({ _id: mail._id }, { $set: { state: 'retrying', lastError: message, updatedAt: services.clock.now() }, $inc: { attempts: 1 } });
    throw error;
  }
  const now = services.clock.now();
  await mails.updateOne({ _id: mail._id }, { $set: { state: 'sent', sentAt: now, updatedAt: now, body: null }, $inc: { attempts: 1 } });
}

/** The workflow gave up: the mail is `failed` (visible, retried by hand). */
export async function markMailFailed(services: Services, input: MailInput): Promise<void> {
  const found = await mailOf(services, input);
  if (!found || found.mail.state === 'sent') return;
  await found.mails.updateOne({ _id: input.mailId, state: { $ne: 'sent' } }, { $set: { state: 'failed', updatedAt: services.clock.now() } });
}
