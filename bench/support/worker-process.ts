// A Temporal worker in its own process for benchmarks (same env as the bench: DB_PREFIX, queue).
import { loadConfig } from '../../services/core/config.ts';
import { createRuntime } from '../../services/runtime.ts';
import { createWorker } from '../../services/worker-factory.ts';

const { services } = await createRuntime(loadConfig());
const { worker } = await createWorker(services);
const running = worker.run();
process.stdout.write('worker ready\n');
// BENCH_GC_PROBE (bench/export.ts runs this with --expose-gc): a full collection every 2 s, then the
// live heap, so a run can tell memory it holds from garbage V8 has not collected yet.
const gc = (globalThis as { gc?: () => void }).gc;
if (gc && process.env.BENCH_GC_PROBE === '1') {
  setInterval(() => {
    gc();
    process.stderr.write(`gc-probe heapUsed=${process.memoryUsage().heapUsed}\n`);
  }, 2000).unref();
}
process.on('SIGTERM', () => worker.shutdown());
await running;
process.exit(0);
