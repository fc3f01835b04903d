import type { OperationContext } from '../core/context.ts';
import { escapeHtml } from '../core/text.ts';

/** A system e-mail the service sends, with its default wording and the variables it may use. */
export interface BuiltinTemplate {
  key: string;
  name: string;
  description: string;
  /** Variable name → sample value used by the preview. */
  variables: Record<string, string>;
  subject: string;
  html: string;
  text: string;
}

export const BUILTIN_TEMPLATES: readonly BuiltinTemplate[] = [
  {
    key: 'welcome',
    name: 'Welcome',
    description: 'Sent to a new user account.',
    variables: { siteName: 'My Site', userName: 'Ada Lovelace', loginUrl: 'https://example.com/admin' },
    subject: 'Welcome to {{siteName}}',
    html: '<p>Hello {{userName}},</p><p>Your account on {{siteName}} is ready. <a href="{{loginUrl}}">Sign in</a>.</p>',
    text: 'Hello {{userName}},\n\nYour account on {{siteName}} is ready. Sign in: {{loginUrl}}',
  },
  {
    key: 'password-reset',
    name: 'Password reset',
    description: 'Sent when a user asks to reset their password.',
    variables: { siteName: 'My Site', userName: 'Ada Lovelace', resetUrl: 'https://example.com/reset?token=sample', expiresInMinutes: '60' },
    subject: 'Reset your {{siteName}} password',
    html: '<p>Hello {{userName}},</p><p><a href="{{resetUrl}}">Choose a new password</a>. The link expires in {{expiresInMinutes}} minutes.</p><p>If you did not ask for this, ignore this message.</p>',
    text: 'Hello {{userName}},\n\nChoose a new password: {{resetUrl}}\nThe link expires in {{expiresInMinutes}} minutes.\n\nIf you did not ask for this, ignore this message.',
  },
  {
    key: 'invitation',
    name: 'Invitation',
    description: 'Sent when an administrator invites someone; the link lets them choose their password.',
    variables: {
      siteName: 'My Site',
      inviterName: 'Ada Lovelace',
      role: 'editor',
      acceptUrl: 'https://example.com/admin/accept-invitation?token=sample',
      expiresInHours: '72',
    },
    subject: '{{inviterName}} invited you to {{siteName}}',
    html: '<p>Hello,</p><p>{{inviterName}} invited you to {{siteName}} as {{role}}.</p><p><a href="{{acceptUrl}}">Accept and choose your password</a>. The link expires in {{expiresInHours}} hours.</p>',
    text: 'Hello,\n\n{{inviterName}} invited you to {{siteName}} as {{role}}.\n\nAccept and choose your password: {{acceptUrl}}\nThe link expires in {{expiresInHours}} hours.',
  },
  {
    key: 'comment-notification',
    name: 'New comment',
    description: 'Sent to moderators when a comment awaits moderation.',
    variables: {
      siteName: 'My Site',
      entryTitle: 'Hello world',
      commentAuthor: 'Grace Hopper',
      commentBody: 'Great post!',
      moderateUrl: 'https://example.com/admin/comments',
    },
    subject: '[{{siteName}}] New comment on "{{entryTitle}}"',
    html: '<p>{{commentAuthor}} commented on <strong>{{entryTitle}}</strong>:</p><blockquote>{{commentBody}}</blockquote><p><a href="{{moderateUrl}}">Moderate</a></p>',
    text: '{{commentAuthor}} commented on "{{entryTitle}}":\n\n{{commentBody}}\n\nModerate: {{moderateUrl}}',
  },
  {
    key: 'comment-reply',
    name: 'Reply to your comment',
    description: 'Sent to a commenter when a moderator replies.',
    variables: {
      siteName: 'My Site',
      entryTitle: 'Hello world',
      commentAuthor: 'Grace Hopper',
      replyBody: 'Thank you!',
      entryUrl: 'https://example.com/hello-world',
    },
    subject: 'New reply on "{{entryTitle}}"',
    html: '<p>Hello {{commentAuthor}},</p><p>Your comment on <a href="{{entryUrl}}">{{entryTitle}}</a> has a reply:</p><blockquote>{{replyBody}}</blockquote>',
    text: 'Hello {{commentAuthor}},\n\nYour comment on "{{entryTitle}}" has a reply:\n\n{{replyBody}}\n\n{{entryUrl}}',
  },
];

export const findBuiltin = (key: string) => BUILTIN_TEMPLATES.find((t) => t.key === key);

export const EMAIL_TEMPLATES_COLLECTION = 'email_templates';

/** A site's customized copy of one built-in template; no document means the default applies. */
export interface EmailTemplateDoc {
  _id: string;
  siteId: string;
  key: string;
  subject: string;
  html: string;
  text: string;
  updatedAt: Date;
}

export const emailTemplatesCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<EmailTemplateDoc>(EMAIL_TEMPLATES_COLLECTION);

const PLACEHOLDER = /\{\{\s*([a-zA-Z][a-zA-Z0-9_]*)\s*\}\}/g;

export const placeholders = (template: string): string[] => [...template.matchAll(PLACEHOLDER)].map((m) => m[1]);

/**
 * Fills `{{name}}` placeholders. Values are escaped in the HTML body (a commenter's text must not
 * become markup in a moderator's mail); subject and plain text are not HTML. Unknown names render empty.
 */
export function render(template: Pick<EmailTemplateDoc, 'subject' | 'html' | 'text'>, data: Record<string, string>) {
  const fill = (source: string, clean: (value: string) => string) => source.replace(PLACEHOLDER, (_, name: string) => clean(data[name] ?? ''));
  return {
    // A line break in a subject value could smuggle in mail headers.
    subject: fill(template.subject, (v) => v.replace(/[\r\n]+/g, ' ')),
    html: fill(template.html, escapeHtml),
    text: fill(template.text, (v) => v),
  };
}

/** A site's wording of a template (its customization, else the default) filled with `data`. */
export async function renderSiteTemplate(ctx: Pick<OperationContext, 'db' | 'site'>, key: string, data: Record<string, string>) {
  const builtin = findBuiltin(key);
  if (!builtin) throw new Error(`no e-mail template ${key}`);
  const custom = await emailTemplatesCollection(ctx).findOne({ siteId: ctx.site._id, key });
  return render(custom ?? builtin, data);
}
