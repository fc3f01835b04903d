// Records one full run of the schedule workflow (publish, then unpublish) into
// test/replay/histories/schedule.json for the replay test. Run after a deliberate change to the
// workflow's shape (engines running):
//   MONGODB_URI=mongodb://127.0.0.1:27117 TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx test/replay/record-schedule.ts
import { writeFileSync } from 'node:fs';
import { startWorld } from '../support/world.ts';
import { defaultSiteContext } from '../support/access.ts';
import { invokeOperation } from '../../services/core/operation.ts';
import { createEntryOp } from '../../services/content/entries-write-ops.ts';
import { scheduleEntryOp } from '../../services/content/schedule-ops.ts';
import { scheduleWorkflowId } from '../../services/content/schedule.ts';

const world = await startWorld({ worker: true });
try {
  const ctx = await defaultSiteContext(world);
  const entry = await invokeOperation(createEntryOp, ctx, { title: 'Recorded schedule' });
  const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  await invokeOperation(scheduleEntryOp, ctx, { id: entry.id, publishOn: at(1), unpublishOn: at(2) });
  const handle = world.services.temporal.client.workflow.getHandle(scheduleWorkflowId(ctx.workspace._id, entry.id));
  console.log(await handle.result());
  const history = await handle.fetchHistory();
  writeFileSync(new URL('./histories/schedule.json', import.meta.url), JSON.stringify(history, null, 1));
  console.log('recorded schedule.json');
} finally {
  await world.close();
}
