// A real worker process for the lifecycle crash test, on the test world's databases and task queue
// (all from the environment). Prints "worker ready" once polling; the test kills it with SIGKILL.
import { resolve } from 'node:path';
import { loadConfig } from '../../services/core/config.ts';
import { createRuntime } from '../../services/runtime.ts';
import { createWorker } from '../../services/worker-factory.ts';

const { services } = await createRuntime(loadConfig());
const bundle = process.env.TEST_WORKFLOW_BUNDLE;
const { worker } = await createWorker(services, bundle ? { workflowBundle: { codePath: resolve(bundle) } } : {});
const running = worker.run();
process.stdout.write('worker ready\n');
await running;
process.exit(0);
