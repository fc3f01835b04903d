import { z } from 'zod';
import { Readable } from 'node:stream';
import { defineOperation } from '../core/operation.ts';
import { ConflictError, NotFoundError, UnsupportedMediaTypeError } from '../core/errors.ts';
import { FileReplySchema } from '../core/file-reply.ts';
import { ENTRY_SCOPE, type EntryDoc } from './model.ts';
import { startImport } from './import-job.ts';
import { exportStream } from './export-stream.ts';
import { NDJSON_CONTENT_TYPE } from './ndjson-format.ts';
import { IMPORT_MAX_BYTES, importsCollection, ImportView, isFinished, toImportView } from './import-model.ts';

const isUpload = (value: unknown): value is { stream: Readable } =>
  typeof value === 'object' && value !== null && (value as { stream?: unknown }).stream instanceof Readable;

export const importContentOp = defineOperation({
  id: 'content.import',
  surface: 'manage',
  method: 'POST',
  path: '/content/import',
  summary: 'Import entries from an NDJSON body (one entry per line; a durable job)',
  description:
    `Body: \`${NDJSON_CONTENT_TYPE}\`, at most ${IMPORT_MAX_BYTES} bytes, stored then imported in batches by a Temporal job. ` +
    'Entries are matched by locale and slug: a line creates its entry, changes it, or leaves it alone when it already says the same ' +
    '(a re-run changes nothing). Each line is checked on its own; rejected lines are reported with their number and why. ' +
    'Answers 202 with the import; follow it at `GET /content/imports/{id}`. Format: docs/content.md.',
  requires: ['content:create', 'content:update', 'content:publish'],
  scope: ENTRY_SCOPE,
  status: 202,
  errors: [403],
  heavy: true,
  body: 'ndjson',
  hiddenFromTools: true,
  audit: { kind: 'import' },
  input: z.object({ upload: z.custom<{ stream: Readable }>(isUpload, { message: 'Expected an NDJSON body' }).optional() }),
  output: ImportView,
  async handler(ctx, { upload }) {
    if (!upload) throw new UnsupportedMediaTypeError(`Send the entries as ${NDJSON_CONTENT_TYPE}, one JSON object per line`);
    return toImportView(await startImport(ctx, upload.stream));
  },
});

const findImport = async (ctx: Parameters<typeof importContentOp.handler>[0], id: string) => {
  const doc = await importsCollection(ctx.db).findOne({ _id: id, siteId: ctx.site._id });
  if (!doc) throw new NotFoundError('Import not found');
  return doc;
};

export const getImportOp = defineOperation({
  id: 'content.imports.get',
  surface: 'manage',
  method: 'GET',
  path: '/content/imports/:id',
  summary: 'An import: its state, lines read, entries imported, rejected lines with why',
  requires: 'content:read',
  scope: 'none',
  input: z.object({ id: z.string() }),
  output: ImportView,
  async handler(ctx, { id }) {
    return toImportView(await findImport(ctx, id));
  },
});

export const cancelImportOp = defineOperation({
  id: 'content.imports.cancel',
  surface: 'manage',
  method: 'POST',
  path: '/content/imports/:id/cancel',
  summary: 'Stop an import before its next batch (the entries already imported stay)',
  requires: 'content:create',
  scope: 'none',
  errors: [409],
  audit: { kind: 'import' },
  input: z.object({ id: z.string() }),
  output: ImportView,
  async handler(ctx, { id }) {
    const doc = await findImport(ctx, id);
    if (isFinished(doc.state)) throw new ConflictError(`The import is already ${doc.state}`);
    const after = await importsCollection(ctx.db).findOneAndUpdate(
      { _id: id, siteId: ctx.site._id, state: { $in: ['queued', 'running'] } },
      { $set: { cancelRequested: true, updatedAt: ctx.services.clock.now() } },
      { returnDocument: 'after' },
    );
    if (!after) throw new ConflictError('The import has just finished');
    return toImportView(after);
  },
});

export const exportContentOp = defineOperation({
  id: 'content.export',
  surface: 'manage',
  method: 'GET',
  path: '/content/export',
  summary: 'Every live entry as NDJSON (the import format), streamed',
  description: 'A header line, then one entry per line in creation order, with its terms by slug and the media it references. Format: docs/content.md.',
  requires: 'content:read',
  scope: ENTRY_SCOPE,
  produces: { contentTypes: [NDJSON_CONTENT_TYPE] },
  input: z.object({ type: z.string().max(64).optional(), locale: z.string().max(35).optional() }),
  output: FileReplySchema,
  async handler(ctx, { type, locale }) {
    const filter = ctx.scope.filter<EntryDoc>({ ...(type ? { type } : {}), ...(locale ? { locale } : {}) });
    return {
      kind: 'file' as const,
      status: 200 as const,
      headers: {
        'content-type': `${NDJSON_CONTENT_TYPE}; charset=utf-8`,
        'content-disposition': 'attachment; filename="content.ndjson"',
        'cache-control': 'no-store',
      },
      body: exportStream(ctx, filter),
    };
  },
});
