import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ensureEngines } from '../scripts/engines.mjs';
import { workflowInterceptorModules, workflowsPath } from '../services/worker-factory.ts';

/**
 * Starts (or reuses) the real local engines once for the whole run, unless MONGODB_URI and
 * TEMPORAL_ADDRESS point at engines already, and bundles the workflow code once for every test worker.
 */
export default async function setup() {
  const dataDir = resolve(process.env.DATA_DIR ?? '.data');
  if (!process.env.MONGODB_URI || !process.env.TEMPORAL_ADDRESS) {
    const engines = await ensureEngines({ dataDir, log: () => undefined });
    process.env.MONGODB_URI ??= engines.mongoUri;
    process.env.TEMPORAL_ADDRESS ??= engines.temporalAddress;
  }
  const bundleDir = `${dataDir}/test`;
  mkdirSync(bundleDir, { recursive: true });
  const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, logger: new DefaultLogger('WARN') });
  const bundlePath = `${bundleDir}/workflow-bundle.js`;
  writeFileSync(bundlePath, code);
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
}
