import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleNotFoundError } from '@temporalio/client';
import { seedWorkspace, startBackupWorld, waitForState, type BackupWorld, type Seeded } from './backup-support.ts';
import { eventually } from '../support/polling.ts';
import { checkHistory } from '../support/histories.ts';
import { backupScheduleId } from '../../workflows/contracts/backup.ts';
import { backupCollections } from '../../services/platform/backup/model.ts';

describe('scheduled backups (Temporal Schedules, set with the quotas)', () => {
  let bw: BackupWorld;
  let s: Seeded;
  beforeAll(async () => {
    bw = await startBackupWorld({ worker: true });
    s = await seedWorkspace(bw.world, 'backup-schedule.example.test', { entries: 2, mediaBytes: [1000] });
  }, 120_000);
  afterAll(async () => {
    await bw?.world.services.temporal.client.schedule
      .getHandle(backupScheduleId(s.workspaceId))
      .delete()
      .catch(() => undefined);
    await bw?.world.close();
  });

  it('a schedule set with the quotas starts scheduled backups, keeps the last N, and goes with the setting', async () => {
    const { client } = bw.world.services.temporal;
    const schedule = client.schedule.getHandle(backupScheduleId(s.workspaceId));
    const bad = await bw.call('PUT', `/tenants/${s.workspaceId}/quotas`, { quotas: { backupSchedule: { every: 'hourly', keep: 1 } } });
    expect(bad.statusCode).toBe(400);
    await expect(schedule.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);

    const manual = await bw.call('POST', `/tenants/${s.workspaceId}/backups`);
    await waitForState(bw.call, `/tenants/${s.workspaceId}/backups/${manual.json().backup.id}`, 'backup', ['succeeded']);

    const set = await bw.call('PUT', `/tenants/${s.workspaceId}/quotas`, { quotas: { requestsPerMinute: 1000, backupSchedule: { every: 'daily', keep: 1 } } });
    expect(set.statusCode, set.body).toBe(200);
    const described = await schedule.describe();
    expect(described.spec.intervals?.[0]?.every).toBe(86_400_000);

    const { backups } = backupCollections(bw.world.services);
    const scheduledDone = async (n: number) =>
      eventually(
        async () => {
          const info = await schedule.describe();
          const starts = info.info.recentActions;
          if (starts.length < n) return null;
          const last = starts[starts.length - 1].action.workflow;
          const run = await client.workflow.getHandle(last.workflowId).describe();
          return run.status.name === 'COMPLETED' ? last.workflowId : null;
        },
        `scheduled start ${n} to finish`,
        120_000,
        200,
      );
    await schedule.trigger();
    await scheduledDone(1);
    await schedule.trigger();
    const second = await scheduledDone(2);
    await checkHistory(client.workflow.getHandle(second), 'scheduled-backup');

    const rows = await backups.find({ workspaceId: s.workspaceId }).sort({ _id: 1 }).toArray();
    expect(rows.map((r) => [r.trigger, r.state])).toEqual([
      ['manual', 'succeeded'],
      ['scheduled', 'succeeded'],
    ]);

    const cleared = await bw.call('PUT', `/tenants/${s.workspaceId}/quotas`, { quotas: { requestsPerMinute: 1000 } });
    expect(cleared.statusCode).toBe(200);
    await expect(schedule.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  }, 300_000);
});
