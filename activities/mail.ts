import type { Services } from '../services/core/context.ts';
import { deliverQueuedMail, markMailFailed } from '../services/mail/outbox.ts';
import type { MailInput } from '../workflows/contracts/mail.ts';

export function createMailActivities(services: Services) {
  return {
    /** Sends the mail unless it was sent already, then marks it sent; a failure is written on it and thrown (retried). */
    deliverMail: (input: MailInput) => deliverQueuedMail(services, input),
    markMailFailed: (input: MailInput) => markMailFailed(services, input),
  };
}

export type MailActivities = ReturnType<typeof createMailActivities>;
