import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { SITE_STATE_COLLECTION, siteStateCollection, siteStateId } from '../core/site-state.ts';
import { topics } from '../core/topics.ts';

export const LocaleCodeSchema = z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or pt-BR');

export interface Language {
  code: string;
  name: string;
  active: boolean;
}

/**
 * A site's languages live in ONE document (order = array order, plus the default code), so
 * reorder and "make default" are single atomic writes and there is always exactly one default.
 */
export interface LanguagesDoc {
  _id: string;
  siteId: string;
  languages: Language[];
  defaultCode: string;
  version: number;
}

/** Where the languages document lives (`site_state`, `_id` = `languages:<siteId>`): a public one (its writes move the public generation). */
export const LANGUAGES_PUBLIC = { name: SITE_STATE_COLLECTION, idPrefix: siteStateId('languages', '') };
const FALLBACK: Omit<LanguagesDoc, '_id' | 'siteId'> = { languages: [{ code: 'en', name: 'English', active: true }], defaultCode: 'en', version: 0 };

const collection = (ctx: OperationContext) => siteStateCollection<LanguagesDoc>(ctx.db);
export const languagesDocId = (siteId: string) => siteStateId('languages', siteId);
const languagesId = (ctx: OperationContext) => languagesDocId(ctx.site._id);

/**
 * The site's languages: held by this process while the change feed vouches for them (every create
 * validates its locale against them), dropped by `site-languages:<id>`, which every change here
 * publishes and waits for, or by `site:<id>` (a restore). A missing document is read every time:
 * only a document that exists is held, so one written by a migration or a restore is never
 * shadowed by the fallback held before it.
 */
export async function loadLanguages(ctx: OperationContext): Promise<LanguagesDoc> {
  const siteId = ctx.site._id;
  const doc = await ctx.services.languages.read(
    `${ctx.db.databaseName} ${siteId}`,
    () => storedLanguages(ctx),
    (found) => (found ? [topics.siteLanguages(siteId), topics.site(siteId)] : null),
  );
  return doc ?? withFallback(ctx);
}

const storedLanguages = (ctx: OperationContext) => collection(ctx).findOne({ _id: languagesId(ctx), siteId: ctx.site._id });
const withFallback = (ctx: OperationContext): LanguagesDoc => ({ _id: languagesId(ctx), siteId: ctx.site._id, ...FALLBACK });

export async function provisionLanguages(ctx: OperationContext): Promise<void> {
  await collection(ctx).updateOne({ _id: languagesId(ctx), siteId: ctx.site._id }, { $setOnInsert: { ...FALLBACK, version: 1 } }, { upsert: true });
}

/**
 * Applies `change` to the languages document with an optimistic retry: the write only lands if
 * nobody else wrote since we read it (filter on `version`), so two admins never lose each other's edit.
 */
export async function updateLanguages(
  ctx: OperationContext,
  change: (doc: LanguagesDoc) => Pick<LanguagesDoc, 'languages' | 'defaultCode'>,
): Promise<LanguagesDoc> {
  for (let attempt = 0; attempt < 5; attempt++) {
    // From the database, not the held copy: another gateway's change may not have reached it yet.
    const current = (await storedLanguages(ctx)) ?? withFallback(ctx);
    const next = change(structuredClone(current));
    const def = next.languages.find((l) => l.code === next.defaultCode);
    if (!def) throw new BadRequestError('The default language must exist');
    if (!def.active) throw new BadRequestError('The default language must stay active');
    const filter =
      current.version === 0
        ? { _id: languagesId(ctx), siteId: ctx.site._id, version: { $in: [0, null] } }
        : { _id: languagesId(ctx), siteId: ctx.site._id, version: current.version };
    try {
      const result = await collection(ctx).findOneAndUpdate(
        filter as never,
        { $set: { languages: next.languages, defaultCode: next.defaultCode, version: current.version + 1 } },
        { upsert: current.version === 0, returnDocument: 'after' },
      );
      if (result) {
        await ctx.services.changeFeed.publish(topics.siteLanguages(ctx.site._id));
        return result;
      }
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
    }
  }
  throw new ConflictError('Languages changed concurrently; retry');
}

export function findLanguage(doc: LanguagesDoc, code: string): Language {
  const language = doc.languages.find((l) => l.code === code);
  if (!language) throw new NotFoundError();
  return language;
}

/**
 * Locale resolution of the Public API (contract 4.3 rule 2): an active language by exact code,
 * then by its primary subtag (`en-GB` → `en`), otherwise the site default. The answer says which
 * locale was used, so a client asking for an unknown one can tell.
 */
export function resolveLocale(doc: Pick<LanguagesDoc, 'languages' | 'defaultCode'>, requested?: string): string {
  if (requested) {
    const active = doc.languages.filter((l) => l.active);
    const wanted = requested.toLowerCase();
    const exact = active.find((l) => l.code.toLowerCase() === wanted);
    if (exact) return exact.code;
    const primary = active.find((l) => l.code.toLowerCase() === wanted.split('-')[0]);
    if (primary) return primary.code;
  }
  return doc.defaultCode;
}
