// Records two runs of the endpoint actor into test/replay/histories/ for the replay tests: one run
// that continues-as-new after two passes, and the run after it, which ends idle.
// Run after a deliberate change to the actor's shape: `npx tsx test/replay/record-endpoint-actor.ts`.
import { writeFileSync } from 'node:fs';
import { adminEndpoints } from '../../services/events/endpoint-ops.ts';
import { actorInput } from '../../services/events/deliveries.ts';
import { endpointActorId, endpointActorWorkflowName, wakeSignal } from '../../workflows/contracts/endpoint-actor.ts';
import { call, contextFor, adminPrincipal, emit, startReceiver, startWebhookWorld } from '../events/support.ts';
import { eventually } from '../support/polling.ts';

const world = await startWebhookWorld({ worker: true, webhooks: { passesPerRun: 2, idleMs: 2_000 } });
const receiver = await startReceiver();
try {
  const { endpoint } = await call(world, adminEndpoints.create, { name: 'recorded', url: receiver.url, events: ['user.created'] });
  const ctx = await contextFor(world, adminPrincipal());
  const where = { workspaceId: ctx.workspace._id, dbName: ctx.workspace.dbName, siteId: ctx.site._id };
  const client = world.services.temporal.client;
  const first = await client.workflow.signalWithStart(endpointActorWorkflowName, {
    taskQueue: world.services.temporal.taskQueue,
    workflowId: endpointActorId(ctx.workspace._id, endpoint.id),
    args: [actorInput(world.services, where, endpoint.id)],
    signal: wakeSignal,
  });
  for (let i = 0; i < 3; i++) {
    await emit(world, 'user.created', { id: `u${i}`, email: `u${i}@example.test`, role: 'editor' });
    await eventually(async () => receiver.received.length > i, `delivery ${i}`, 20_000);
  }
  const firstRun = client.workflow.getHandle(first.workflowId, first.signaledRunId);
  await eventually(async () => (await firstRun.describe()).status.name === 'CONTINUED_AS_NEW', 'continue-as-new', 30_000);
  const latest = client.workflow.getHandle(first.workflowId);
  await eventually(async () => (await latest.describe()).status.name === 'COMPLETED', 'idle end', 60_000);
  const histories = { 'endpoint-actor-continued.json': await firstRun.fetchHistory(), 'endpoint-actor-idle.json': await latest.fetchHistory() };
  for (const [name, history] of Object.entries(histories)) {
    writeFileSync(new URL(`./histories/${name}`, import.meta.url), JSON.stringify(history, null, 1));
    console.log(`recorded ${name} (${history.events?.length} events)`);
  }
} finally {
  await receiver.close();
  await world.close();
}
