import { getHeapStatistics } from 'node:v8';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, ConfigError } from './core/config.ts';
import { closeServices } from './core/services.ts';
import { createRuntime } from './runtime.ts';
import { createWorker } from './worker-factory.ts';
import { reportRetiredRuns } from './retired-workflows.ts';

/** Temporal worker process entry. On SIGTERM running activities get a grace period, then go back to the server. */
async function main() {
  const config = loadConfig();
  // The SDK's own chatter (bundler output, state changes) only when asked for debug logs.
  Runtime.install({ logger: new DefaultLogger(config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace' ? 'DEBUG' : 'WARN') });
  const { services } = await createRuntime(config);
  const { worker, connection, recovery } = await createWorker(services);
  // Ctrl-C reaches the worker twice (the terminal's SIGINT and the one `npm start` forwards): the
  // first signal starts the shutdown, a later one has nothing left to do.
  const stop = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The heap limit decides how much garbage piles up between full collections (scripts/worker-node-flags.mjs):
  // logged so a worker started without the flags shows it.
  services.log.info({ taskQueue: services.temporal.taskQueue, heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20) }, 'worker running');
  await reportRetiredRuns(services);
  await worker.run();
  await recovery.stop();
  // Audit rows of the last activities are written before the connection goes.
  await services.audit.settled();
  await connection.close();
  await closeServices(services);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : (error?.stack ?? error)}\n`);
  process.exit(1);
});
