import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';
import { PageQuery, pageById, pageEnvelope } from '../core/paging.ts';
import { RULE_ACTIONS, RULE_KINDS, RuleInput, rulesCollection, spamTermsCollection, type RuleDoc, type SpamTermDoc } from './rules.ts';

const RuleView = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(RULE_KINDS),
  value: z.union([z.string(), z.number()]),
  action: z.enum(RULE_ACTIONS),
  createdAt: z.string(),
});
const SpamTermView = z.object({ id: z.string(), term: z.string(), createdAt: z.string() });

const toRuleView = (r: RuleDoc): z.infer<typeof RuleView> => ({
  id: r._id,
  name: r.name,
  kind: r.kind,
  value: r.value,
  action: r.action,
  createdAt: r.createdAt.toISOString(),
});
const toTermView = (t: SpamTermDoc): z.infer<typeof SpamTermView> => ({ id: t._id, term: t.term, createdAt: t.createdAt.toISOString() });

/** Cursors are bound to the list and the site, so one from another site is refused. */
const listName = (ctx: OperationContext, list: string) => `${list}:${ctx.site._id}`;

export const listRulesOp = defineOperation({
  id: 'commentRules.list',
  surface: 'manage',
  method: 'GET',
  path: '/comment-rules',
  summary: 'Comment moderation rules, oldest first',
  requires: 'comments:moderate',
  scope: 'none',
  input: z.object(PageQuery),
  output: pageEnvelope(RuleView),
  async handler(ctx, query) {
    const { rows, page } = await pageById(ctx, listName(ctx, 'comment-rules'), rulesCollection(ctx), { siteId: ctx.site._id }, query);
    return { data: rows.map(toRuleView), page };
  },
});

export const createRuleOp = defineOperation({
  id: 'commentRules.create',
  surface: 'manage',
  method: 'POST',
  path: '/comment-rules',
  summary: 'Add a moderation rule (links, email, ip or phrase → spam, hold or approve)',
  requires: 'settings:manage',
  status: 201,
  input: RuleInput,
  output: RuleView,
  async handler(ctx, input) {
    const doc: RuleDoc = {
      _id: newId(),
      siteId: ctx.site._id,
      name: input.name ?? `${input.kind} ${input.value} → ${input.action}`,
      kind: input.kind,
      value: input.value,
      action: input.action,
      createdAt: ctx.services.clock.now(),
    };
    await rulesCollection(ctx).insertOne(doc);
    return toRuleView(doc);
  },
});

export const deleteRuleOp = defineOperation({
  id: 'commentRules.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/comment-rules',
  summary: 'Remove a moderation rule (`?id=`)',
  requires: 'settings:manage',
  input: z.object({ id: z.string().min(1) }),
  output: z.object({ id: z.string(), deleted: z.boolean() }),
  async handler(ctx, { id }) {
    const { deletedCount } = await rulesCollection(ctx).deleteOne({ siteId: ctx.site._id, _id: id });
    if (!deletedCount) throw new NotFoundError('Rule not found');
    return { id, deleted: true };
  },
});

export const listSpamTermsOp = defineOperation({
  id: 'commentSpamTerms.list',
  surface: 'manage',
  method: 'GET',
  path: '/comment-spam-terms',
  summary: 'Spam terms, oldest first',
  requires: 'comments:moderate',
  scope: 'none',
  input: z.object(PageQuery),
  output: pageEnvelope(SpamTermView),
  async handler(ctx, query) {
    const { rows, page } = await pageById(ctx, listName(ctx, 'comment-spam-terms'), spamTermsCollection(ctx), { siteId: ctx.site._id }, query);
    return { data: rows.map(toTermView), page };
  },
});

export const createSpamTermOp = defineOperation({
  id: 'commentSpamTerms.create',
  surface: 'manage',
  method: 'POST',
  path: '/comment-spam-terms',
  summary: 'Add a spam term (case-insensitive; a duplicate is 409)',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: z.object({ term: z.string().trim().toLowerCase().min(2).max(100) }),
  output: SpamTermView,
  async handler(ctx, { term }) {
    const doc: SpamTermDoc = { _id: newId(), siteId: ctx.site._id, term, createdAt: ctx.services.clock.now() };
    // The unique index decides races; this check also covers a workspace created before the index existed.
    if (await spamTermsCollection(ctx).findOne({ siteId: ctx.site._id, term })) throw new ConflictError('This spam term exists');
    try {
      await spamTermsCollection(ctx).insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictError('This spam term exists');
      throw error;
    }
    return toTermView(doc);
  },
});

export const deleteSpamTermOp = defineOperation({
  id: 'commentSpamTerms.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/comment-spam-terms',
  summary: 'Remove a spam term (`?id=` or `?term=`)',
  requires: 'settings:manage',
  input: z.object({ id: z.string().min(1).optional(), term: z.string().trim().toLowerCase().min(1).optional() }),
  output: z.object({ id: z.string(), deleted: z.boolean() }),
  async handler(ctx, { id, term }) {
    if (!id && !term) throw new BadRequestError('id or term is required');
    const filter = id ? { siteId: ctx.site._id, _id: id } : { siteId: ctx.site._id, term: term! };
    const doc = await spamTermsCollection(ctx).findOneAndDelete(filter);
    if (!doc) throw new NotFoundError('Spam term not found');
    return { id: doc._id, deleted: true };
  },
});

export const ruleOperations = [listRulesOp, createRuleOp, deleteRuleOp, listSpamTermsOp, createSpamTermOp, deleteSpamTermOp];
