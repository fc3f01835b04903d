// A Temporal worker in its own process for benchmarks (same env as the bench: DB_PREFIX, queue).
import { loadConfig } from '../../services/core/config.ts';
import { createRuntime } from '../../services/runtime.ts';
import { createWorker } from '../../services/worker-factory.ts';

const { services } = await createRuntime(loadConfig());
const { worker } = await createWorker(services);
const running = worker.run();
process.stdout.write('worker ready\n');
process.on('SIGTERM', () => worker.shutdown());
await running;
process.exit(0);
