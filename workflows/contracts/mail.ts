// The contract of the mail workflow: shared by the workflow, its activities and the outbox that
// starts it (services/mail/outbox.ts). Pure: types and strings only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const mailWorkflowType = 'mailWorkflow';

/** One workflow per mail: a second start for the same mail finds the first. */
export const mailWorkflowId = (workspaceId: string, mailId: string) => `mail:${workspaceId}:${mailId}`;

export interface MailInput {
  workspaceId: string;
  siteId: string;
  mailId: string;
}
