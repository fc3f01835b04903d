import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { COMMENT_COLLECTIONS, type CommentStatus } from './model.ts';

/**
 * Moderation rules, in the spirit of WordPress's discussion settings: hold or spam a comment with
 * too many links, from an e-mail address or domain, from an IP, or containing a phrase; or approve
 * trusted authors at once. A spam term is the simplest rule: a word that files the comment as spam.
 */
export const RULE_KINDS = ['links', 'email', 'ip', 'phrase'] as const;
export const RULE_ACTIONS = ['spam', 'hold', 'approve'] as const;

export const RuleInput = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    kind: z.enum(RULE_KINDS),
    /** `links`: the highest allowed number of links; `email`: an address or `@domain`; `ip`: an exact address; `phrase`: text. */
    value: z.union([z.string().trim().min(1).max(200), z.number().int().min(0).max(100)]),
    action: z.enum(RULE_ACTIONS),
  })
  .refine((r) => (r.kind === 'links') === (typeof r.value === 'number'), { message: 'links rules take a number, other kinds a string', path: ['value'] });

export interface RuleDoc {
  _id: string;
  siteId: string;
  name: string;
  kind: (typeof RULE_KINDS)[number];
  value: string | number;
  action: (typeof RULE_ACTIONS)[number];
  createdAt: Date;
}

export interface SpamTermDoc {
  _id: string;
  siteId: string;
  /** Lower-case: matching is case-insensitive. Unique per site. */
  term: string;
  createdAt: Date;
}

export const rulesCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<RuleDoc>(COMMENT_COLLECTIONS.rules);
export const spamTermsCollection = (ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<SpamTermDoc>(COMMENT_COLLECTIONS.spamTerms);

export interface Submission {
  authorName: string;
  authorEmail: string | null;
  authorUrl: string | null;
  body: string;
  ip: string | null;
}

const countLinks = (text: string) => (text.match(/https?:\/\/|www\./gi) ?? []).length;

function ruleMatches(rule: RuleDoc, s: Submission): boolean {
  switch (rule.kind) {
    case 'links':
      return countLinks(s.body) > Number(rule.value);
    case 'email': {
      const value = String(rule.value).toLowerCase();
      const email = s.authorEmail ?? '';
      return value.startsWith('@') ? email.endsWith(value) : email === value;
    }
    case 'ip':
      return s.ip === rule.value;
    case 'phrase': {
      const value = String(rule.value).toLowerCase();
      return `${s.authorName}\n${s.body}`.toLowerCase().includes(value);
    }
  }
}

/**
 * The status a new visitor comment starts in: spam when a spam term or a spam rule matches;
 * otherwise held (pending) unless an approve rule matches and no hold rule does. Pending is the
 * default because comments from the public are moderated first.
 */
export async function classify(ctx: OperationContext, s: Submission): Promise<{ status: CommentStatus; reason: string | null }> {
  const siteId = ctx.site._id;
  const [terms, rules] = await Promise.all([
    spamTermsCollection(ctx).find({ siteId }).limit(5000).toArray(),
    rulesCollection(ctx).find({ siteId }).sort({ _id: 1 }).limit(1000).toArray(),
  ]);
  const haystack = [s.authorName, s.authorEmail ?? '', s.authorUrl ?? '', s.body].join('\n').toLowerCase();
  const term = terms.find((t) => haystack.includes(t.term));
  if (term) return { status: 'spam', reason: `spam term: ${term.term}` };
  const matched = rules.filter((r) => ruleMatches(r, s));
  const spam = matched.find((r) => r.action === 'spam');
  if (spam) return { status: 'spam', reason: `rule: ${spam.name}` };
  const hold = matched.find((r) => r.action === 'hold');
  if (hold) return { status: 'pending', reason: `rule: ${hold.name}` };
  const approve = matched.find((r) => r.action === 'approve');
  if (approve) return { status: 'approved', reason: null };
  return { status: 'pending', reason: null };
}
