import type { PluginDefinition } from '../definition.ts';
import { seoFieldsPlugin } from './seo-fields.ts';
import { webhookSummaryPlugin } from './webhook-summary.ts';

/** Plugins every process carries; each site activates the ones it wants. */
export const builtinPlugins: readonly PluginDefinition[] = [seoFieldsPlugin, webhookSummaryPlugin];
