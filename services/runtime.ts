import type { Config } from './core/config.ts';
import type { Services } from './core/context.ts';
import { createServices, type ServiceOptions } from './core/services.ts';
import { features } from './features.ts';
import { createWebhookPublisher } from './events/publisher.ts';
import { createAccessGate, type AccessGate } from './access/gate.ts';
import { buildApp } from './http/app.ts';
import { mediaFilesExtension } from './http/media-files.ts';
import { mcpExtension } from './http/mcp.ts';
import { oauthExtension } from './http/oauth.ts';
import { adminUiExtension } from './http/admin-ui.ts';
import { graphqlExtension } from './http/graphql.ts';
import { exportPreviewExtension } from './http/export-preview.ts';
import { installPluginHost } from './plugins/host.ts';

/**
 * Wires the features into one process: services, the access gate and the HTTP app. The gateway,
 * the worker and the tests all start from here, so they run the same wiring.
 */
export async function createRuntime(config: Config, options: ServiceOptions = {}) {
  const services: Services = await createServices(config, { features, events: createWebhookPublisher, ...options });
  installPluginHost(services);
  const gate: AccessGate = createAccessGate(services);
  return {
    services,
    gate,
    buildApp: (appOptions: { logger?: boolean } = {}) => buildApp({ services, gate, extensions: [mediaFilesExtension, mcpExtension, oauthExtension, adminUiExtension, graphqlExtension, exportPreviewExtension], ...appOptions }),
  };
}
