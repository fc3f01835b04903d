import { getHeapStatistics } from 'node:v8';
import { createServer, type AddressInfo } from 'node:net';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, ConfigError } from './core/config.ts';
import { closeServices } from './core/services.ts';
import { createRuntimeServices } from './runtime-services.ts';
import { createWorker, followPlacement } from './worker-factory.ts';
import { reportRetiredRuns } from './retired-workflows.ts';
import { startMetricsListener } from './http/metrics-listener.ts';
import { engineReadiness, startProbeListener } from './http/probes.ts';

/** A port free on loopback now (the SDK binds it right after). */
async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Temporal worker process entry. On SIGTERM running activities get a grace period, then go back to the server. */
async function main() {
  const config = loadConfig();
  // The SDK serves its own worker metrics (pollers, slots, task latencies) on a loopback port of
  // its choosing; the worker's metrics listener appends them to every scrape (docs/observability.md).
  const sdkMetrics = config.WORKER_METRICS_PORT === undefined ? null : `127.0.0.1:${await freeLoopbackPort()}`;
  Runtime.install({
    // The SDK's own chatter (bundler output, state changes) only when asked for debug logs.
    logger: new DefaultLogger(config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace' ? 'DEBUG' : 'WARN'),
    ...(sdkMetrics ? { telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetrics } } } } : {}),
  });
  // Services only: the worker serves no HTTP, so nothing of Fastify, the surfaces, GraphQL or MCP is loaded.
  const services = await createRuntimeServices(config, { role: 'worker' });
  // Probes first, so liveness answers while the worker connects. Ready while the engines answer and
  // the worker polls: not yet while it starts, no longer while it drains.
  let polling = () => false;
  const probes =
    config.WORKER_HEALTH_PORT === undefined
      ? null
      : await startProbeListener(services, config.WORKER_HEALTH_PORT, () => {
          const engines = engineReadiness(services);
          const running = polling();
          return { ...engines, ready: engines.ready && running, missing: running ? engines.missing : [...engines.missing, 'worker'] };
        });
  if (probes) services.log.info({ address: probes.address }, 'worker probes listening');
  await followPlacement(services);
  const { worker, connection, recovery } = await createWorker(services);
  polling = () => worker.getState() === 'RUNNING';
  const metrics =
    config.WORKER_METRICS_PORT === undefined
      ? null
      : await startMetricsListener(services, config.WORKER_METRICS_PORT, async () => {
          const response = await fetch(`http://${sdkMetrics}/metrics`, { signal: AbortSignal.timeout(2000) });
          return response.text();
        });
  if (metrics) services.log.info({ address: metrics.address }, 'worker metrics listening');
  // Ctrl-C reaches the worker twice (the terminal's SIGINT and the one `npm start` forwards): the
  // first signal starts the shutdown, a later one has nothing left to do.
  const stop = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The heap limit decides how much garbage piles up between full collections (scripts/worker-node-flags.mjs):
  // logged so a worker started without the flags shows it.
  // So are the allocator settings (WORKER_ENV, same file): without them the worker's resident memory grows.
  services.log.info(
    {
      taskQueue: services.temporal.taskQueue,
      heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
      mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? null,
    },
    'worker running',
  );
  await reportRetiredRuns(services);
  await worker.run();
  await recovery.stop();
  await metrics?.close();
  await probes?.close();
  // Audit rows and search postings of the last activities are written before the connection goes.
  await services.audit.settled();
  await services.searchSync.settled();
  await connection.close();
  // Spans of the last activities are sent before the process goes (closeServices).
  await closeServices(services);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : (error?.stack ?? error)}\n`);
  process.exit(1);
});
