import type { Readable } from 'node:stream';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, PayloadTooLargeError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { actorUserId } from '../core/principal.ts';
import type { contentImportWorkflow } from '../../workflows/content-import.ts';
import { contentImportWorkflowId, contentImportWorkflowType } from '../../workflows/contracts/content-import.ts';
import { headerProblem } from './ndjson-format.ts';
import { finishImport } from './import-run.ts';
import { IMPORT_MAX_BYTES, importFiles, importsCollection, type ImportDoc, IMPORT_FILE_KIND } from './import-model.ts';
import { MEDIA_BUCKET } from '../media/model.ts';

// Apart from import-run.ts (the batches the activities run) because it types the job's start with
// the workflow itself: activities → import-run → workflow would be a cycle.

/** Lines per batch (one activity, one checkpoint). */
export const IMPORT_BATCH = 1000;
/** Bytes of the upload kept to check its header before anything is written. */
const HEAD_BYTES = 64 * 1024;

/** Stores the body in GridFS as it arrives (never whole in memory): its size and first bytes. */
async function store(ctx: OperationContext, id: string, body: Readable, maxBytes: number): Promise<{ bytes: number; head: Buffer }> {
  // Marked as an import's in the bucket it shares with the media library (the library reads by its own items' ids).
  const upload = importFiles(ctx.db).openUploadStream(id, { id: id as never, metadata: { kind: IMPORT_FILE_KIND } });
  let bytes = 0;
  const head: Buffer[] = [];
  let headBytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw new PayloadTooLargeError(`An import is at most ${maxBytes} bytes`);
      if (headBytes < HEAD_BYTES) {
        head.push(chunk);
        headBytes += chunk.length;
      }
      if (!upload.write(chunk)) await new Promise((resolve) => upload.once('drain', resolve));
    }
    await new Promise<void>((resolve, reject) => {
      upload.once('error', reject);
      upload.end(() => resolve());
    });
  } catch (error) {
    await upload.abort().catch(() => undefined);
    await importFiles(ctx.db)
      .delete(id as never)
      .catch(() => undefined);
    throw error;
  }
  return { bytes, head: Buffer.concat(head) };
}

/** A header line, when the file has one, must name this format and version: refused before anything is written. */
function checkHead(head: Buffer): void {
  const newline = head.indexOf(10);
  const first = head
    .subarray(0, newline === -1 ? head.length : newline)
    .toString('utf8')
    .trim();
  const problem = headerProblem(first);
  if (problem) throw new BadRequestError(`line 1: ${problem}`);
}

/**
 * Starts an import: the body stored (413 over the limit, 400 empty or with a wrong header, with
 * nothing kept), the import's document (queued), then its Temporal job (`contentImportWorkflow`).
 */
export async function startImport(ctx: OperationContext, body: Readable, maxBytes = IMPORT_MAX_BYTES): Promise<ImportDoc> {
  const id = newId();
  const { bytes, head } = await store(ctx, id, body, maxBytes);
  const drop = () =>
    importFiles(ctx.db)
      .delete(id as never)
      .catch(() => undefined);
  if (bytes === 0 || head.toString('utf8').trim() === '') {
    await drop();
    throw new BadRequestError('The body holds no lines: send one JSON entry per line');
  }
  try {
    checkHead(head);
  } catch (error) {
    await drop();
    throw error;
  }
  const now = ctx.services.clock.now();
  const doc: ImportDoc = {
    _id: id,
    siteId: ctx.site._id,
    state: 'queued',
    fileId: id,
    fileBucket: MEDIA_BUCKET,
    bytes,
    offset: 0,
    line: 0,
    inFlight: null,
    linesRead: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    rejected: 0,
    rejections: [],
    cancelRequested: false,
    error: null,
    authorId: actorUserId(ctx.principal),
    keyScope: ctx.principal.kind === 'key' ? ctx.principal.scope : null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  await importsCollection(ctx.db).insertOne(doc);
  const { client, taskQueue } = ctx.services.temporal;
  try {
    await client.workflow.start<typeof contentImportWorkflow>(contentImportWorkflowType, {
      taskQueue,
      workflowId: contentImportWorkflowId(ctx.workspace._id, ctx.site._id, id),
      args: [{ workspaceId: ctx.workspace._id, siteId: ctx.site._id, importId: id, batch: IMPORT_BATCH }],
    });
  } catch (error) {
    await finishImport(ctx, doc, 'failed', 'the job could not be started');
    throw error;
  }
  return doc;
}
