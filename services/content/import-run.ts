import type { OperationContext } from '../core/context.ts';
import { AppError, UnauthorizedError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { scopeGuard } from '../core/scope.ts';
import { loadLanguages } from '../languages/languages.ts';
import { contentCollections, ENTRY_SCOPE, newEntryState, type EntryDoc, type LiveSnapshot } from './model.ts';
import { findContentType, validateFields, type ContentTypeView } from './content-types.ts';
import { localeAmong } from './entry-input.ts';
import { snapshotOf } from './entries.ts';
import { listTaxonomies, taxonomyCollections, type TaxonomyDoc } from './taxonomies.ts';
import { changeEntriesById, createEntries, settleCreated, settleOwed, type ContentEvent } from './write-path.ts';
import { canonical, headerProblem, parseEntryLine, type EntryLine, type TermRef } from './ndjson-format.ts';
import { readLines } from './import-lines.ts';
import { importFilesOf, importsCollection, REJECTIONS_KEPT, type ImportDoc, type Rejection } from './import-model.ts';

/** What a line sets on its entry: the content compared with the stored one (equal: nothing is written). */
type Content = Pick<EntryDoc, 'type' | 'title' | 'titleLower' | 'excerpt' | 'blocks' | 'fields' | 'status' | 'live' | 'publishedAt' | 'terms' | 'headerRef'>;

const note = (importId: string) => `import ${importId}`;
const COMPARED: ReadonlyArray<keyof Content> = ['type', 'title', 'excerpt', 'blocks', 'fields', 'status', 'live', 'publishedAt', 'terms', 'headerRef'];
const sameContent = (doc: EntryDoc, content: Content) => COMPARED.every((key) => canonical(doc[key]) === canonical(content[key]));

/** The context's scope made from the importing key's (stored with the import): lines outside it are refused. */
export function importScope(ctx: OperationContext, job: Pick<ImportDoc, 'keyScope' | 'authorId'>): OperationContext {
  if (!job.keyScope) return ctx;
  const principal = {
    kind: 'key' as const,
    keyId: 'import',
    userId: job.authorId ?? '',
    capabilities: new Set<never>(),
    scope: job.keyScope,
    isPlatformOperator: false,
  };
  return { ...ctx, scope: scopeGuard(principal, ENTRY_SCOPE, 'content import') };
}

const reason = (error: unknown) =>
  error instanceof UnauthorizedError ? "outside the importing key's scope" : error instanceof AppError ? error.message : null;

/** Terms named by slug → their ids, the missing ones created (ancestors first). Idempotent: a slug already there is reused. */
async function resolveTerms(ctx: OperationContext, wanted: Map<string, { taxonomy: string; ref: TermRef }>): Promise<Map<string, string>> {
  const { terms } = taxonomyCollections(ctx);
  const ids = new Map<string, string>();
  const byTaxonomy = new Map<string, Set<string>>();
  for (const { taxonomy, ref } of wanted.values()) {
    const slugs = byTaxonomy.get(taxonomy) ?? new Set<string>();
    for (const s of [...(ref.parents ?? []).map((p) => p.slug), ref.slug]) slugs.add(s);
    byTaxonomy.set(taxonomy, slugs);
  }
  for (const [taxonomy, slugs] of byTaxonomy) {
    for await (const term of terms.find({ siteId: ctx.site._id, taxonomy, slug: { $in: [...slugs] } }, { projection: { _id: 1, slug: 1 } })) {
      ids.set(`${taxonomy}/${term.slug}`, term._id);
    }
  }
  for (const { taxonomy, ref } of wanted.values()) {
    let parentId: string | null = null;
    for (const step of [...(ref.parents ?? []), ref]) {
      const key = `${taxonomy}/${step.slug}`;
      let id = ids.get(key);
      if (!id) {
        await terms
          .updateOne(
            { siteId: ctx.site._id, taxonomy, slug: step.slug },
            { $setOnInsert: { _id: newId(), name: step.name ?? step.slug, parentId, createdAt: ctx.services.clock.now() } },
            { upsert: true },
          )
          .catch((error: { code?: number }) => {
            if (error.code !== 11000) throw error; // created meanwhile: read below
          });
        id = (await terms.findOne({ siteId: ctx.site._id, taxonomy, slug: step.slug }, { projection: { _id: 1 } }))!._id;
        ids.set(key, id);
      }
      parentId = id;
    }
  }
  return ids;
}

/** Checks what the file cannot: the type, its fields, the locale, the taxonomies, the scope. Answers the reason a line is refused. */
function checkLine(
  ctx: OperationContext,
  line: EntryLine,
  type: ContentTypeView | null,
  locale: string,
  taxonomies: Map<string, TaxonomyDoc>,
  authorId: string | null,
): string | null {
  if (!type) return `type: unknown content type "${line.type}"`;
  try {
    validateFields(type, line.fields);
    if (line.live) validateFields(type, line.live.fields);
    for (const [slug, refs] of Object.entries(line.terms)) {
      const taxonomy = taxonomies.get(slug);
      if (!taxonomy) return `terms.${slug}: no such taxonomy`;
      if (!taxonomy.types.includes(type.slug)) return `terms.${slug}: this taxonomy does not apply to ${type.slug}`;
      if (!taxonomy.hierarchical && refs.some((ref) => ref.parents?.length)) return `terms.${slug}: this taxonomy is not hierarchical`;
    }
    ctx.scope.check({ type: type.slug, locale, authorId }, ENTRY_SCOPE);
  } catch (error) {
    const why = reason(error);
    if (why === null) throw error;
    return why;
  }
  return null;
}

function contentOf(line: EntryLine, terms: Record<string, string[]>, existing: EntryDoc | null, now: Date): Content {
  const published = line.status === 'published';
  const live: LiveSnapshot | null = published ? snapshotOf(line.live ?? line) : null;
  const publishedAt = published ? (line.publishedAt ?? (existing?.status === 'published' ? existing.publishedAt : null) ?? now) : null;
  return {
    type: line.type,
    title: line.title,
    titleLower: line.title.toLowerCase(),
    excerpt: line.excerpt,
    blocks: line.blocks,
    fields: line.fields,
    status: line.status,
    live,
    publishedAt,
    terms,
    headerRef: line.headerRef as EntryDoc['headerRef'],
  };
}

/** Records a line's refusal with why, in the batch's report. */
const rejectInto = (rejections: Rejection[]) => (no: number, error: string) => rejections.push({ line: no, error });

/** A batch's lines read from the file and checked, before any write (`checkBatch`). */
export interface CheckedBatch {
  /** The byte offset it was read from: it is the batch to write only while the checkpoint is there. */
  offset: number;
  linesRead: number;
  nextOffset: number;
  nextNo: number;
  ended: boolean;
  valid: Array<{ no: number; line: EntryLine; locale: string }>;
  rejections: Rejection[];
}

/**
 * Reads up to `max` lines from `offset` and checks each one (format, type, fields, locale,
 * taxonomies, scope, a slug twice in the batch): writes nothing, so the next batch's can run while
 * a batch writes (`importBatch`).
 */
async function checkBatch(ctx: OperationContext, job: ImportDoc, offset: number, firstNo: number, max: number): Promise<CheckedBatch> {
  const { lines, nextOffset, nextNo, ended } = await readLines(importFilesOf(ctx.db, job), job.fileId!, job.bytes, offset, firstNo, max);
  const rejections: Rejection[] = [];
  const reject = rejectInto(rejections);
  const valid: CheckedBatch['valid'] = [];
  const checked = { offset, linesRead: lines.length, nextOffset, nextNo, ended, valid, rejections };
  if (lines.length === 0) return checked;
  const languages = await loadLanguages(ctx);
  const taxonomies = new Map((await listTaxonomies(ctx)).map((t) => [t.slug, t]));
  const types = new Map<string, ContentTypeView | null>();
  const seen = new Map<string, number>();
  for (const raw of lines) {
    if (raw.tooLong) {
      reject(raw.no, 'line too long');
      continue;
    }
    const text = raw.text!.trim();
    if (text === '') continue;
    // The optional header: the format and its version.
    const header = raw.no === 1 ? headerProblem(text) : undefined;
    if (header !== undefined) {
      if (header) reject(raw.no, header);
      continue;
    }
    const parsed = parseEntryLine(text);
    if ('error' in parsed) {
      reject(raw.no, parsed.error);
      continue;
    }
    const { line } = parsed;
    if (!types.has(line.type)) types.set(line.type, await findContentType(ctx, line.type));
    let locale: string;
    try {
      locale = localeAmong(languages, line.locale);
    } catch (error) {
      reject(raw.no, reason(error) ?? String(error));
      continue;
    }
    const problem = checkLine(ctx, line, types.get(line.type) ?? null, locale, taxonomies, job.authorId);
    if (problem) {
      reject(raw.no, problem);
      continue;
    }
    const key = `${locale}/${line.slug}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      reject(raw.no, `slug: "${line.slug}" (${locale}) is also on line ${earlier}`);
      continue;
    }
    seen.set(key, raw.no);
    valid.push({ no: raw.no, line, locale });
  }
  return checked;
}

/**
 * One batch of an import: up to `max` lines from the checkpoint, validated one by one, each valid
 * line created or changed through the write path (or left alone when the entry already says the
 * same), the checkpoint moved past them with the batch's figures. Idempotent: entries are keyed by
 * `(locale, slug)`, so a batch repeated after a crash writes only what it had not, and reports the
 * figures it fixed before its writes (`inFlight`). Answers whether the import is finished and, when
 * not, the next batch's lines being read and checked meanwhile (`ahead`, for the next call: used
 * only if the checkpoint is then where they were read from, else read again).
 */
export async function importBatch(
  baseCtx: OperationContext,
  importId: string,
  max: number,
  heartbeat: () => void = () => undefined,
  ahead?: Promise<CheckedBatch>,
): Promise<{ done: boolean; ahead?: Promise<CheckedBatch> }> {
  const imports = importsCollection(baseCtx.db);
  const job = await imports.findOne({ _id: importId, siteId: baseCtx.site._id });
  if (!job || job.state === 'succeeded' || job.state === 'failed' || job.state === 'cancelled') return { done: true };
  const ctx = importScope(baseCtx, job);
  const now = () => ctx.services.clock.now();
  if (job.cancelRequested) {
    await finishImport(ctx, job, 'cancelled', null);
    return { done: true };
  }
  if (job.state === 'queued') await imports.updateOne({ _id: job._id, state: 'queued' }, { $set: { state: 'running', updatedAt: now() } });
  if (job.inFlight) {
    // A batch cut short: first the effects its writes still owe (postings, events).
    while ((await settleOwed(ctx, { 'pending.note': note(importId) }, 500)) === 500) heartbeat();
  }
  if (!job.fileId) {
    await finishImport(ctx, job, 'failed', 'the uploaded file is gone');
    return { done: true };
  }
  const prefetched = ahead ? await ahead.catch(() => null) : null;
  const batch = prefetched?.offset === job.offset ? prefetched : await checkBatch(ctx, job, job.offset, job.line + 1, max);
  const { nextOffset, nextNo, ended, valid, rejections } = batch;
  if (batch.linesRead === 0) {
    await finishImport(ctx, job, 'succeeded', null);
    return { done: true };
  }
  heartbeat();
  // The next batch is read and checked while this one writes: the worker's share of it beside the engine's.
  const next = ended ? undefined : checkBatch(ctx, job, nextOffset, nextNo, max);
  // Awaited by the next call, or dropped (a failed read is read again there).
  next?.catch(() => undefined);
  const reject = rejectInto(rejections);

  // Checkpoint of the batch before its writes: the ids its new entries get. A retry creates them
  // under the same ids, so an entry the cut-short attempt created is told apart from one that was there.
  const retried = job.inFlight && job.inFlight.offset === job.offset ? job.inFlight : null;
  const keyOf = (v: { locale: string; line: EntryLine }) => `${v.locale}/${v.line.slug}`;
  const ids: Record<string, string> = retried?.ids ?? Object.fromEntries(valid.map((v) => [keyOf(v), newId((v.line.createdAt ?? now()).getTime())]));
  if (!retried) await imports.updateOne({ _id: job._id }, { $set: { inFlight: { offset: job.offset, nextOffset, nextLine: nextNo - 1, ids, updates: [] } } });

  const wantedTerms = new Map<string, { taxonomy: string; ref: TermRef }>();
  for (const v of valid) {
    for (const [taxonomy, refs] of Object.entries(v.line.terms)) for (const ref of refs) wantedTerms.set(`${taxonomy}/${ref.slug}`, { taxonomy, ref });
  }
  const termIds = await resolveTerms(ctx, wantedTerms);
  const termsOf = (line: EntryLine) =>
    Object.fromEntries(
      Object.entries(line.terms).map(([taxonomy, refs]) => [taxonomy, [...new Set(refs.map((ref) => termIds.get(`${taxonomy}/${ref.slug}`)!))]]),
    );

  // Insert first: a new entry costs no look-up. The lines whose entry could not be inserted (its
  // slug is there, or the quota is full) are looked up by their unique key and compared.
  const docs: EntryDoc[] = valid.map((v) => ({
    _id: ids[keyOf(v)],
    siteId: ctx.site._id,
    ...newEntryState(now()),
    // The line's header, and its creation date when it gives one.
    ...contentOf(v.line, termsOf(v.line), null, now()),
    ...(v.line.createdAt ? { createdAt: v.line.createdAt } : {}),
    slug: v.line.slug,
    locale: v.locale,
    authorId: job.authorId,
  }));
  const lineOf = new Map(valid.map((v) => [keyOf(v), v]));
  const { entries } = contentCollections(ctx.db);
  // The stored entries of some lines, in their order (null: none): one read per locale, the slugs an
  // `$in` on the unique index (point lookups), instead of one read per line.
  const lookUp = async (wanted: readonly EntryDoc[]) => {
    const slugsByLocale = new Map<string, string[]>();
    for (const doc of wanted) {
      const slugs = slugsByLocale.get(doc.locale);
      if (slugs) slugs.push(doc.slug);
      else slugsByLocale.set(doc.locale, [doc.slug]);
    }
    const stored = new Map<string, EntryDoc>();
    const reads = [...slugsByLocale].map(([locale, slugs]) => entries.find({ siteId: ctx.site._id, locale, slug: { $in: slugs } }).toArray());
    for (const doc of (await Promise.all(reads)).flat()) stored.set(`${doc.locale}/${doc.slug}`, doc);
    return wanted.map((doc) => stored.get(`${doc.locale}/${doc.slug}`) ?? null);
  };
  let createdCount = 0;
  let unchanged = 0;
  let updatedCount = 0;
  const landedBefore: EntryDoc[] = [];
  const updates: Array<{ v: (typeof valid)[number]; stored: EntryDoc; content: Content }> = [];
  /** A line whose entry is there (or could not be inserted): created by a cut-short attempt, unchanged, to change, or refused. */
  const classify = (doc: EntryDoc, stored: EntryDoc | null, error: string) => {
    const v = lineOf.get(`${doc.locale}/${doc.slug}`)!;
    if (!stored) return reject(v.no, error);
    if (stored._id === doc._id) {
      createdCount++;
      landedBefore.push(stored);
    } else if (stored.trashedAt) reject(v.no, `slug: "${doc.slug}" (${doc.locale}) is held by a trashed entry; restore or purge it first`);
    else if (stored.type !== v.line.type) reject(v.no, `slug: "${doc.slug}" (${doc.locale}) is an entry of type ${stored.type}`);
    else {
      const content = contentOf(v.line, termsOf(v.line), stored, now());
      if (!sameContent(stored, content)) updates.push({ v, stored, content });
      else if (retried?.updates.includes(keyOf(v)))
        updatedCount++; // changed by the cut-short attempt
      else unchanged++;
    }
  };
  // A file mostly imported already (a re-run) is looked up first and only its missing lines are
  // inserted; otherwise insert first, and look up only the lines whose insert was refused.
  let toInsert = docs;
  if (job.unchanged + job.updated > job.created) {
    const found = await lookUp(docs);
    toInsert = docs.filter((_, j) => !found[j]);
    docs.forEach((doc, j) => found[j] && classify(doc, found[j], ''));
  }
  const { created, refused } = await createEntries(ctx, toInsert, { note: note(importId), audit: { kind: 'import', id: importId } });
  createdCount += created.length;
  heartbeat();
  const found = await lookUp(refused.map((r) => r.doc));
  refused.forEach((r, j) => classify(r.doc, found[j], r.error));
  // The entries the cut-short attempt created: their postings and events again (idempotent, at least once).
  if (landedBefore.length) await settleCreated(ctx, landedBefore);
  if (updates.length) await imports.updateOne({ _id: job._id }, { $addToSet: { 'inFlight.updates': { $each: updates.map((u) => keyOf(u.v)) } } });
  const results = await changeEntriesById(
    ctx,
    updates.map(({ stored, content }) => ({
      id: stored._id,
      compute: (current: EntryDoc) => (sameContent(current, content) ? null : content),
      effects: (before: EntryDoc, after: EntryDoc) => {
        const events: ContentEvent[] = ['content.updated'];
        if (after.status === 'published' && before.status !== 'published') events.push('content.published');
        if (before.status === 'published' && after.status !== 'published') events.push('content.unpublished');
        return { events, note: note(importId) };
      },
    })),
  );
  results.forEach((result, i) => {
    if (!('error' in result)) return void updatedCount++;
    const why = reason(result.error);
    if (why === null) throw result.error;
    reject(updates[i].v.no, why);
  });
  await imports.updateOne(
    { _id: job._id, offset: job.offset },
    {
      $set: { offset: nextOffset, line: nextNo - 1, inFlight: null, updatedAt: now() },
      $inc: { linesRead: batch.linesRead, created: createdCount, updated: updatedCount, unchanged, rejected: rejections.length },
      $push: { rejections: { $each: rejections.sort((a, b) => a.line - b.line), $slice: REJECTIONS_KEPT } },
    },
  );
  if (ended) {
    const after = await imports.findOne({ _id: job._id });
    if (after) await finishImport(ctx, after, 'succeeded', null);
    return { done: true };
  }
  return { done: false, ahead: next };
}

/** Ends an import: its state, its file dropped (the report stays). Idempotent. */
export async function finishImport(ctx: OperationContext, job: ImportDoc, state: 'succeeded' | 'failed' | 'cancelled', error: string | null): Promise<void> {
  const now = ctx.services.clock.now();
  await importsCollection(ctx.db).updateOne(
    { _id: job._id, state: { $in: ['queued', 'running'] } },
    { $set: { state, error, fileId: null, inFlight: null, updatedAt: now, finishedAt: now } },
  );
  if (job.fileId)
    await importFilesOf(ctx.db, job)
      .delete(job.fileId as never)
      .catch(() => undefined);
}
