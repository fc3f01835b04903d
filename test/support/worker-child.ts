// A real worker process for the crash tests: same database prefix, task queue and (optional)
// webhook settings as the test's world, all from the environment, running services/worker-factory.ts.
// Prints "worker ready" once polling; the tests kill it with SIGKILL (test/support/worker-process.ts).
import { resolve } from 'node:path';
import { loadConfig } from '../../services/core/config.ts';
import { createRuntime } from '../../services/runtime.ts';
import { createWorker, followPlacement } from '../../services/worker-factory.ts';

const options = JSON.parse(process.env.WEBHOOK_TEST_OPTIONS ?? '{}');
const config = loadConfig();
const { services } = await createRuntime(config, { webhooks: options });
await followPlacement(services);
const bundle = process.env.TEST_WORKFLOW_BUNDLE;
const { worker } = await createWorker(services, bundle ? { workflowBundle: { codePath: resolve(bundle) } } : {});
const running = worker.run();
process.stdout.write('worker ready\n');
await running;
process.exit(0);
