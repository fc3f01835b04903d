import type { Services } from '../../core/context.ts';
import type { Workspace } from '../../core/tenants.ts';
import { platformCollections } from '../../tenancy/platform-db.ts';
import { backupCollections, type BackupPartRow, type BackupRow } from './model.ts';

/** A step that retrying cannot mend (the workspace is gone, the archive is corrupt): the activity fails for good. */
export class BackupStopError extends Error {
  constructor(
    message: string,
    readonly type: 'BackupWorkspaceState' | 'BackupVerification',
  ) {
    super(message);
  }
}

/** Heartbeats the running activity; steps call it at least once a batch (services never import Temporal's activity API). */
export type Beat = () => void;

export async function runningBackup(services: Services, backupId: string): Promise<BackupRow | null> {
  return backupCollections(services).backups.findOne({ _id: backupId, state: 'running' });
}

export async function workspaceOf(services: Services, workspaceId: string): Promise<Workspace> {
  const workspace = await platformCollections(services).workspaces.findOne({ _id: workspaceId });
  if (!workspace) throw new BackupStopError('Workspace not found', 'BackupWorkspaceState');
  return workspace;
}

/** Collection names of a workspace database, and which of them are GridFS buckets (`<b>.files` beside `<b>.chunks`). */
export async function databaseLayout(services: Services, workspace: Workspace): Promise<{ collections: string[]; buckets: string[] }> {
  const names = (await services.workspaceDb(workspace).listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .filter((name) => !name.startsWith('system.'));
  const all = new Set(names);
  const buckets = names
    .filter((name) => name.endsWith('.files') && all.has(`${name.slice(0, -6)}.chunks`))
    .map((name) => name.slice(0, -6))
    .sort();
  const chunks = new Set(buckets.map((bucket) => `${bucket}.chunks`));
  return { collections: names.filter((name) => !chunks.has(name)).sort(), buckets };
}

/**
 * Records parts once they are whole in the store, in one write (and one progress update) however
 * many. Their counters are added to the backup's progress only the first time each is recorded (a
 * step retried after a worker died rewrites the same parts, counted once).
 */
export async function recordParts(
  services: Services,
  row: BackupRow,
  parts: readonly Omit<BackupPartRow, '_id' | 'backupId'>[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { parts: rows, backups } = backupCollections(services);
  const inc: Record<string, number> = {};
  const add = (field: string, n: number) => (inc[field] = (inc[field] ?? 0) + n);
  if (parts.length > 0) {
    const result = await rows.bulkWrite(
      parts.map((part) => ({ updateOne: { filter: { _id: `${row._id}/${part.file}` }, update: { $set: { ...part, backupId: row._id } }, upsert: true } })),
      { ordered: false },
    );
    for (const index of Object.keys(result.upsertedIds)) {
      const part = parts[Number(index)];
      if (part.kind === 'collection') {
        add('progress.collectionsDone', 1);
        add('progress.documents', part.documents);
      } else add('progress.mediaFilesDone', 1);
      add('progress.bytes', part.bytes);
    }
  }
  await backups.updateOne({ _id: row._id }, { $inc: inc, $set: { ...extra, updatedAt: services.clock.now() } });
}
