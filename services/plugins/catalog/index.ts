import type { PluginDefinition } from '../definition.ts';
import { webhookEventGroupPlugin } from './webhook-event-group.ts';

/**
 * The allow-listed local plugin catalog (docs/plugins.md "Catalog"): plugins shipped with the
 * service that a site installs before it can activate them. Unlike the built-ins they are not
 * installed everywhere. Every process carries their code (filters are wrapped by the host, so they
 * only act where the plugin is active); nothing outside this list can be installed.
 */
export const catalogPlugins: readonly PluginDefinition[] = [webhookEventGroupPlugin];

const catalogIds = new Set(catalogPlugins.map((p) => p.id));

export const isCatalogPlugin = (id: string) => catalogIds.has(id);
