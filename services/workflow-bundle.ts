import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Compiled (`npm run build`, `dist/`) this module is JavaScript and so are the workflows beside it;
 * run from source (`npm start`, the tests) both are TypeScript.
 */
const compiled = import.meta.url.endsWith('.js');

/** The workflows' entry module, in the same form as this module. */
export const workflowsPath = fileURLToPath(new URL(`../workflows/index.${compiled ? 'js' : 'ts'}`, import.meta.url));

/**
 * Temporal's OpenTelemetry workflow interceptors, in every workflow bundle whether tracing is on or
 * off (one bundle, one replay behaviour): a workflow span continues the span that started or
 * signalled it and carries its context to the activities it schedules. Its spans leave the
 * isolate through the `exporter` sink (services/worker-factory.ts).
 */
export const workflowInterceptorModules = [createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];

/**
 * Where `npm run build` writes the workflow bundle (scripts/build.mjs): `dist/workflow-bundle.js`,
 * built from `workflowsPath` with `workflowInterceptorModules`. A compiled worker loads it instead of
 * bundling at start (no webpack run in production); from source there is none.
 */
export const builtWorkflowBundlePath = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/** The prebuilt bundle of a compiled build, when present; otherwise the worker bundles `workflowsPath` at start. */
export function builtWorkflowBundle(): { codePath: string } | undefined {
  return compiled && existsSync(builtWorkflowBundlePath) ? { codePath: builtWorkflowBundlePath } : undefined;
}
