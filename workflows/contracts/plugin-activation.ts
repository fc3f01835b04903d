// The contract of the plugin-activation workflow: shared by the workflow, its activity and the
// plugins feature that starts it. Pure: types and strings only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const pluginActivationWorkflowType = 'pluginActivationWorkflow';

/** One activation or deactivation of one plugin on one site at a time. */
export const pluginActivationWorkflowId = (workspaceId: string, siteId: string, pluginId: string) => `plugin-activation:${workspaceId}:${siteId}:${pluginId}`;

export interface PluginRoutineInput {
  workspaceId: string;
  siteId: string;
  pluginId: string;
  action: 'activate' | 'deactivate';
}

export interface PluginRoutineResult {
  /** The state changed (false: it was already so). */
  changed: boolean;
  /** First activation on this site. */
  installed: boolean;
}

/** `ok: false` means the plugin's own routine threw: the caller answers 502 with `error`. */
export type PluginActivationOutcome = ({ ok: true } & PluginRoutineResult) | { ok: false; error: string };

/** The error type the activity gives a throwing plugin routine; it is never retried. */
export const PLUGIN_ROUTINE_FAILED = 'PluginRoutineFailed';
