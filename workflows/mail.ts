import { proxyActivities } from '@temporalio/workflow';
import type { MailActivities } from '../activities/mail.ts';
import type { MailInput } from './contracts/mail.ts';

const { deliverMail } = proxyActivities<MailActivities>({
  startToCloseTimeout: '1 minute',
  // A mail server that is down is waited for: retries back off to one a minute for a day.
  scheduleToCloseTimeout: '1 day',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { markMailFailed } = proxyActivities<MailActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 10 } });

/**
 * One outgoing mail (`mail:<workspaceId>:<mailId>`). The activity sends it and then marks it sent,
 * and skips a mail already marked, so a retry never sends it twice; each failed attempt is written
 * on the mail (`retrying`, `lastError`). After a day of failures the mail is marked `failed`, to
 * be retried by hand.
 */
export async function mailWorkflow(input: MailInput): Promise<void> {
  try {
    await deliverMail(input);
  } catch {
    await markMailFailed(input);
  }
}
