import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { PluginActivities } from '../activities/plugin-activation.ts';
import { PLUGIN_ROUTINE_FAILED, type PluginActivationOutcome, type PluginRoutineInput } from './contracts/plugin-activation.ts';

export type { PluginActivationOutcome };

const { runPluginRoutine } = proxyActivities<PluginActivities>({
  startToCloseTimeout: '1 minute',
  // Retries cover infrastructure blips (database, worker restart); a plugin that throws is final.
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [PLUGIN_ROUTINE_FAILED] },
});

/**
 * One activation or deactivation of one plugin on one site
 * (`plugin-activation:<workspaceId>:<siteId>:<pluginId>`). The activity runs the plugin's routine
 * and records the state only if it succeeded, so a failure leaves the site as it was.
 */
export async function pluginActivationWorkflow(input: PluginRoutineInput): Promise<PluginActivationOutcome> {
  try {
    return { ok: true, ...(await runPluginRoutine(input)) };
  } catch (error) {
    if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === PLUGIN_ROUTINE_FAILED) {
      return { ok: false, error: error.cause.message };
    }
    throw error;
  }
}
