import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ensureEngines, stopEngines } from '../scripts/engines.mjs';
import { workflowInterceptorModules, workflowsPath } from '../services/worker-factory.ts';

/**
 * Starts (or reuses) the real local engines once for the whole run, unless MONGODB_URI and
 * TEMPORAL_ADDRESS point at engines already, and bundles the workflow code once for every test worker.
 * The placement tests' second cluster (started by the first of them that needs it) lives in a folder
 * of this run's, and is stopped with it.
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
  const secondCluster = mkdtempSync(join(tmpdir(), 'placement-mongo-'));
  process.env.TEST_SECOND_CLUSTER_DIR = secondCluster;
  return async () => {
    await stopEngines({ dataDir: secondCluster, log: () => undefined });
    rmSync(secondCluster, { recursive: true, force: true });
  };
}
