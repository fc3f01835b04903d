import type { OperationContext } from '../core/context.ts';
import { siteOrigin } from '../tenancy/site-origin.ts';
import { queueMail } from '../mail/outbox.ts';
import { readSettingsDoc } from './site-settings-store.ts';

/**
 * A link to one of the account pages of the admin UI, carrying its single-use token as `?token=`:
 * the site's origin (site-origin.ts), or this gateway's local address for a site without a domain
 * and no PUBLIC_BASE_URL (development).
 */
export function accountLink(ctx: Pick<OperationContext, 'services' | 'site'>, page: string, token: string): string {
  const origin = siteOrigin(ctx.services.config, ctx.site) || `http://localhost:${ctx.services.config.PORT}`;
  return `${origin}/admin/${page}?token=${encodeURIComponent(token)}`;
}

/** An account mail through the outbox, from the site's `email.from` setting (else MAIL_FROM), with the site's name. */
export async function sendAccountMail(ctx: OperationContext, mail: { key: string; template: string; to: string; data: Record<string, string> }) {
  const values = (await readSettingsDoc(ctx.db, ctx.site._id))?.values as { email?: { from?: string | null } } | undefined;
  const from = values?.email?.from ?? ctx.services.config.MAIL_FROM;
  return queueMail(ctx, { ...mail, from, data: { siteName: ctx.site.name, ...mail.data } });
}
