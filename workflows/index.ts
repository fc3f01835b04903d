// The one barrel the worker bundles: every workflow the platform runs.
export { probeWorkflow } from './probe.ts';
