import { z } from 'zod';
import { defineOperation } from '../../core/operation.ts';
import { ConflictError, NotFoundError } from '../../core/errors.ts';
import { FileReplySchema } from '../../core/file-reply.ts';
import { pageById, pageEnvelope, PageQuery } from '../../core/paging.ts';
import { getWorkspace } from '../lifecycle.ts';
import { backupCollections, BackupView, backupView, RestoreView, restoreView } from './model.ts';
import { archiveFiles, MANIFEST_FILE, objectKey, tarLength, tarStream, type Manifest } from './archive.ts';
import { backupStore } from './store.ts';
import { cancelBackup, deleteBackup, findBackup, startBackup, startRestore } from './control.ts';

// Workspace backups and restores (docs/backups.md): platform operations like the other tenant
// routes. A backup or restore is a workflow; its state and progress are rows in the platform
// database, so every read here answers without a worker.

const TenantId = z.object({ id: z.string().min(1) });
const BackupId = TenantId.extend({ backupId: z.string().min(1) });

export const createBackupOp = defineOperation({
  id: 'tenants.backups.create',
  surface: 'manage',
  method: 'POST',
  path: '/tenants/:id/backups',
  summary: 'Back up a workspace: every collection and media file into the backup store',
  description:
    'Answers 202 with the backup `running`; poll GET …/backups/{backupId} for its progress and state (`succeeded`, `failed`, `cancelled`). ' +
    "The workspace's changes answer 423 while the copy runs (reads are served): docs/backups.md. A workspace being provisioned or deleted, or with a backup or restore running, is a 409.",
  requires: 'platform:manage',
  errors: [409],
  status: 202,
  input: TenantId,
  output: z.object({ backup: BackupView }),
  async handler(ctx, { id }) {
    return { backup: backupView(await startBackup(ctx.services, id)) };
  },
});

export const listBackupsOp = defineOperation({
  id: 'tenants.backups.list',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id/backups',
  summary: "A workspace's backups, oldest first, with their state and progress",
  requires: 'platform:read',
  input: TenantId.extend(PageQuery),
  output: pageEnvelope(BackupView),
  async handler(ctx, { id, ...page }) {
    await getWorkspace(ctx.services, id);
    const { rows, page: info } = await pageById(ctx, `backups:${id}`, backupCollections(ctx.services).backups, { workspaceId: id }, page);
    return { data: rows.map(backupView), page: info };
  },
});

export const getBackupOp = defineOperation({
  id: 'tenants.backups.get',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id/backups/:backupId',
  summary: 'One backup: state, progress (collections, documents, media files, bytes) and size',
  requires: 'platform:read',
  input: BackupId,
  output: z.object({ backup: BackupView }),
  async handler(ctx, { id, backupId }) {
    return { backup: backupView(await findBackup(ctx.services, id, backupId)) };
  },
});

export const downloadBackupOp = defineOperation({
  id: 'tenants.backups.download',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id/backups/:backupId/download',
  summary: 'The backup archive as one tar (manifest.json, collections/*.ndjson, media/…), streamed',
  description: 'Only a `succeeded` backup (else 409). The archive holds the workspace whole, password hashes and key digests included: platform:manage.',
  requires: 'platform:manage',
  errors: [409],
  input: BackupId,
  output: FileReplySchema,
  produces: { contentTypes: ['application/x-tar'], ranges: false },
  async handler(ctx, { id, backupId }) {
    const row = await findBackup(ctx.services, id, backupId);
    if (row.state !== 'succeeded') throw new ConflictError(`Backup is ${row.state}`);
    const store = backupStore(ctx.services.config);
    const manifestKey = objectKey(row, MANIFEST_FILE);
    const manifestBytes = await store.size(manifestKey);
    if (manifestBytes === null) throw new NotFoundError('Backup archive not found in the store');
    const chunks: Buffer[] = [];
    for await (const chunk of store.get(manifestKey) as AsyncIterable<Buffer>) chunks.push(chunk);
    const manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest;
    const files = archiveFiles(manifest, manifestBytes);
    const mtime = (row.finishedAt ?? row.createdAt).getTime();
    return {
      kind: 'file' as const,
      status: 200 as const,
      headers: {
        'content-type': 'application/x-tar',
        'content-disposition': `attachment; filename="backup-${id}-${backupId}.tar"`,
        'content-length': String(tarLength(files, mtime)),
        etag: `"${row.manifestSha256}"`,
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      },
      body: tarStream(store, row, files, mtime),
    };
  },
});

export const cancelBackupOp = defineOperation({
  id: 'tenants.backups.cancel',
  surface: 'manage',
  method: 'POST',
  path: '/tenants/:id/backups/:backupId/cancel',
  summary: 'Stop a running backup; what it wrote is removed and it ends `cancelled`',
  description: 'Answers 202 with the backup as it is (still `running` until its workflow has cleaned up). A backup that is not running is a 409.',
  requires: 'platform:manage',
  errors: [409],
  status: 202,
  input: BackupId,
  output: z.object({ backup: BackupView }),
  async handler(ctx, { id, backupId }) {
    await cancelBackup(ctx.services, await findBackup(ctx.services, id, backupId));
    return { backup: backupView(await findBackup(ctx.services, id, backupId)) };
  },
});

export const deleteBackupOp = defineOperation({
  id: 'tenants.backups.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/tenants/:id/backups/:backupId',
  summary: 'Delete a finished backup and its archive',
  description: 'A running backup is a 409 (cancel it first).',
  requires: 'platform:manage',
  errors: [409],
  input: BackupId,
  output: z.object({ id: z.string(), deleted: z.boolean() }),
  async handler(ctx, { id, backupId }) {
    await deleteBackup(ctx.services, await findBackup(ctx.services, id, backupId));
    return { id: backupId, deleted: true };
  },
});

export const restoreTenantOp = defineOperation({
  id: 'tenants.restore',
  surface: 'manage',
  method: 'POST',
  path: '/tenants/:id/restore',
  summary: 'Restore a workspace from one of its backups',
  description:
    'The archive is checked first without reading its parts: a foreign, replaced or incomplete archive, or a part of another size than its manifest says, is a 409 naming why, and nothing changes. ' +
    'Then 202 (poll GET …/restores/{restoreId}): the workflow hashes every part before anything changes (a mismatch ends the restore `failed` naming the part, the workspace untouched), ' +
    'then the workspace is suspended, its data replaced by the snapshot, and it comes back to its status before. docs/backups.md.',
  requires: 'platform:manage',
  errors: [409],
  status: 202,
  input: TenantId.extend({ backupId: z.string().min(1).max(200) }),
  output: z.object({ restore: RestoreView }),
  async handler(ctx, { id, backupId }) {
    if (id === ctx.workspace._id) throw new ConflictError('A workspace cannot restore itself');
    return { restore: restoreView(await startRestore(ctx.services, id, backupId)) };
  },
});

export const getRestoreOp = defineOperation({
  id: 'tenants.restores.get',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id/restores/:restoreId',
  summary: 'One restore: state and progress',
  requires: 'platform:read',
  input: TenantId.extend({ restoreId: z.string().min(1) }),
  output: z.object({ restore: RestoreView }),
  async handler(ctx, { id, restoreId }) {
    const row = await backupCollections(ctx.services).restores.findOne({ _id: restoreId, workspaceId: id });
    if (!row) throw new NotFoundError('Restore not found');
    return { restore: restoreView(row) };
  },
});

export const backupOperations = [createBackupOp, listBackupsOp, getBackupOp, downloadBackupOp, cancelBackupOp, deleteBackupOp, restoreTenantOp, getRestoreOp];
