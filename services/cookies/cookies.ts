import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../access/sessions.ts';
import { siteStateCollection, siteStateId } from '../core/site-state.ts';

/** Consent categories as cookie banners group them; `necessary` needs no consent. */
export const COOKIE_CATEGORIES = ['necessary', 'preferences', 'analytics', 'marketing'] as const;

export const CookieEntry = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'a cookie name (RFC 6265 token)'),
  provider: z.string().trim().min(1).max(200),
  category: z.enum(COOKIE_CATEGORIES),
  purpose: z.string().trim().max(1000).default(''),
  /** As shown to visitors, e.g. `session`, `12 hours`, `1 year`. */
  duration: z.string().trim().min(1).max(100),
});

export const CookieRegistryBody = z.object({
  cookies: z
    .array(CookieEntry)
    .max(500)
    .superRefine((list, check) => {
      const seen = new Set<string>();
      list.forEach((c, i) => {
        if (seen.has(c.name)) check.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate cookie ${c.name}` });
        seen.add(c.name);
      });
    }),
});

export const CookieRegistryView = CookieRegistryBody.extend({ updatedAt: z.string().nullable() });

export interface CookieRegistryDoc {
  /** `cookies:<siteId>` (`site_state`): one registry per site. */
  _id: string;
  siteId: string;
  cookies: z.infer<typeof CookieEntry>[];
  updatedAt: Date;
}

export const cookiesCollection = (ctx: Pick<OperationContext, 'db'>) => siteStateCollection<CookieRegistryDoc>(ctx.db);
export const cookiesId = (siteId: string) => siteStateId('cookies', siteId);

/** Until an administrator saves a registry, it lists the one cookie the service itself sets. */
export const defaultCookies = (): z.infer<typeof CookieEntry>[] => [
  {
    name: SESSION_COOKIE,
    provider: 'this site',
    category: 'necessary',
    purpose: 'Keeps a signed-in user signed in (administration and previews).',
    duration: `${Math.round(SESSION_TTL_MS / 3_600_000)} hours`,
  },
];
