import { NativeConnection, Worker, type InjectedSinks, type WorkerOptions } from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { Services } from './core/context.ts';
import { builtWorkflowBundle, workflowInterceptorModules, workflowsPath } from './workflow-bundle.ts';
import { createActivities } from '../activities/index.ts';
import { startDeliveryRecovery } from './events/recovery.ts';
import { startWorkspaceReconciler } from './platform/lifecycle-reconciler.ts';
import { startRetention } from './platform/retention.ts';
import { startMailDrain } from './mail/drain.ts';
import { startEntryCountReconciler } from './content/entry-counts.ts';
import { startSearchBackfill } from './content/search-index.ts';

export { workflowsPath, workflowInterceptorModules } from './workflow-bundle.ts';

/** The `exporter` sink when tracing is off (and for replays): workflow spans are dropped. */
export const droppedWorkflowSpans: InjectedSinks<OpenTelemetrySinks> = { exporter: { export: { fn: () => undefined, callDuringReplay: false } } };

type WorkflowSpanProcessor = Parameters<typeof makeWorkflowExporter>[0];

/**
 * Traced: the workflow spans go to the process's span processor; untraced: they are dropped. The
 * interceptors build their spans with OpenTelemetry SDK 1 (`instrumentationLibrary`,
 * `parentSpanId`); the process's SDK 2 exporter reads `instrumentationScope` and `parentSpanContext`.
 */
function workflowSpanSink(services: Services): InjectedSinks<OpenTelemetrySinks> {
  const { spanProcessor, resource } = services.tracing;
  if (!spanProcessor || !resource) return droppedWorkflowSpans;
  const adapter = {
    onStart: () => undefined,
    onEnd(span: { instrumentationLibrary?: unknown; parentSpanId?: string; spanContext(): { traceId: string; traceFlags: number } }) {
      const { traceId, traceFlags } = span.spanContext();
      const parentSpanContext = span.parentSpanId ? { traceId, spanId: span.parentSpanId, traceFlags } : undefined;
      spanProcessor.onEnd(
        Object.assign(span, { instrumentationScope: span.instrumentationLibrary, parentSpanContext }) as unknown as Parameters<typeof spanProcessor.onEnd>[0],
      );
    },
    forceFlush: () => spanProcessor.forceFlush(),
    shutdown: () => spanProcessor.shutdown(),
  };
  return { exporter: makeWorkflowExporter(adapter as unknown as WorkflowSpanProcessor, resource as unknown as Parameters<typeof makeWorkflowExporter>[1]) };
}

/**
 * With several clusters a worker writes workspace databases that may move: it follows the state
 * feed like a gateway, so a move's steps wait for its acknowledgement too (docs/placement.md).
 * With one cluster nothing moves and the worker keeps out of the feed.
 */
export async function followPlacement(services: Services): Promise<void> {
  if (services.placement.pool.clusters.length > 1) await services.changeFeed.start();
}

export interface WorkerFactoryOptions {
  /** A prebuilt bundle (tests bundle once); otherwise a compiled build's (`dist/workflow-bundle.js`), else the worker bundles `workflowsPath`. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  taskQueue?: string;
}

/** A Temporal worker running every workflow and activity against these services. */
export async function createWorker(services: Services, options: WorkerFactoryOptions = {}) {
  const connection = await NativeConnection.connect({ address: services.config.TEMPORAL_ADDRESS });
  const workflowBundle = options.workflowBundle ?? builtWorkflowBundle();
  const worker = await Worker.create({
    connection,
    namespace: services.config.TEMPORAL_NAMESPACE,
    taskQueue: options.taskQueue ?? services.temporal.taskQueue,
    ...(workflowBundle ? { workflowBundle } : { workflowsPath }),
    activities: createActivities(services),
    interceptors: {
      // A prebuilt bundle was built with these (test/global-setup.ts, scripts/build.mjs); otherwise they are bundled here.
      ...(workflowBundle ? {} : { workflowModules: workflowInterceptorModules }),
      // Traced: each activity runs in a span continuing its workflow's, so its MongoDB commands and webhook requests join the trace.
      ...(services.tracing.enabled
        ? {
            activity: [
              (ctx) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: services.tracing.tracer }),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ],
          }
        : {}),
    },
    sinks: workflowSpanSink(services),
    // Activities get this long to finish when the worker is asked to stop; the rest go back to the server.
    shutdownGraceTime: '10 seconds',
    // After a SIGKILL, what the dead worker held comes back within seconds (docs/production.md,
    // "Degrade, never hang"): a heartbeat reaches the server at least every second (not every 80%
    // of the timeout), so a short heartbeat timeout (the delivery passes': 3 s) has slack on a busy
    // worker; a workflow task sent to a dead worker's sticky queue goes to the shared queue after 3 s, not 10 s.
    maxHeartbeatThrottleInterval: '1 second',
    stickyQueueScheduleToStartTimeout: '3 seconds',
  });
  // The worker owns the webhook queue: re-queue what a crash interrupted, then drain every minute.
  // It stops by itself when the services' MongoDB client closes.
  const delivery = startDeliveryRecovery(services);
  // ...and finishes workspace lifecycle steps whose gateway died before the actor got them.
  const reconciler = startWorkspaceReconciler(services);
  // ...and removes what retention says is due: delivery history, audit rows, old revisions, the old
  // trash, expired rate counters (the local engine runs no TTL index): platform/retention.ts.
  const retention = startRetention(services);
  // ...and recounts the kept entry counters of the `entries` quota (content/entry-counts.ts).
  const entryCounts = startEntryCountReconciler(services);
  // ...and indexes for search the entries written before the index (content/search-index.ts)...
  const searchBackfill = startSearchBackfill(services);
  // ...and starts the workflow of any mail left queued (docs/accounts.md).
  const mails = startMailDrain(services);
  const recovery = {
    ...delivery,
    async stop() {
      await Promise.all([delivery.stop(), reconciler.stop(), retention.stop(), entryCounts.stop(), searchBackfill.stop(), mails.stop()]);
    },
  };
  return { worker, connection, recovery };
}
