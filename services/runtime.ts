import type { Config } from './core/config.ts';
import { createRuntimeServices, type RuntimeOptions } from './runtime-services.ts';
import { createAccessGate, type AccessGate } from './access/gate.ts';
import { authenticateOAuthToken, isOAuthAccessToken } from './oauth/authenticate.ts';
import { buildApp } from './http/app.ts';
import { mediaFilesExtension } from './http/media-files.ts';
import { mcpExtension } from './http/mcp.ts';
import { oauthExtension } from './http/oauth.ts';
import { adminUiExtension } from './http/admin-ui.ts';
import { graphqlExtension } from './http/graphql.ts';
import { exportPreviewExtension } from './http/export-preview.ts';
import { engineReadiness, probesExtension } from './http/probes.ts';

export type { RuntimeOptions } from './runtime-services.ts';

/**
 * Wires the features into a serving process: services (`runtime-services.ts`), the access gate and
 * the HTTP app. The gateway, the tests and the benchmarks start from here; the worker serves no
 * HTTP and builds only the services.
 */
export async function createRuntime(config: Config, options: RuntimeOptions = {}) {
  const services = await createRuntimeServices(config, options);
  const gate: AccessGate = createAccessGate(services, { isToken: isOAuthAccessToken, authenticate: authenticateOAuthToken });
  return {
    services,
    gate,
    buildApp: (appOptions: { logger?: boolean } = {}) =>
      buildApp({
        services,
        gate,
        extensions: [
          mediaFilesExtension,
          mcpExtension,
          oauthExtension,
          adminUiExtension,
          graphqlExtension,
          exportPreviewExtension,
          probesExtension(engineReadiness),
        ],
        ...appOptions,
      }),
  };
}
