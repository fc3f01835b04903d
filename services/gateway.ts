import { loadConfig, ConfigError } from './core/config.ts';
import { closeServices } from './core/services.ts';
import { bootstrapPlatform } from './platform/bootstrap.ts';
import { announceVersion } from './platform/version-announcement.ts';
import { createRuntime } from './runtime.ts';
import { startMetricsListener } from './http/metrics-listener.ts';

/** HTTP process entry: build the app, listen, and drain in-flight requests on SIGTERM. */
async function main() {
  const config = loadConfig();
  const runtime = await createRuntime(config);
  const { services } = runtime;
  const boot = await bootstrapPlatform(services);
  await announceVersion(services);
  // Access and workspace state are held in memory while this feed vouches for them (docs/access.md).
  await services.changeFeed.start();
  const app = await runtime.buildApp();
  const address = await app.listen({ port: config.PORT, host: config.HOST });
  const metrics = config.METRICS_PORT === undefined ? null : await startMetricsListener(services, config.METRICS_PORT);
  if (metrics) services.log.info({ address: metrics.address }, 'gateway metrics listening');

  if (boot.generatedAdmin) {
    // Where the password is, never the password itself (README, "first start").
    const { email, passwordFile } = boot.generatedAdmin;
    services.log.info(
      { email, passwordFile, signIn: `${address}/admin` },
      'administrator created: its generated password is in passwordFile (mode 0600); sign in, change it, delete the file',
    );
  }
  services.log.info({ address }, 'gateway listening');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    services.log.info({ signal }, 'gateway draining');
    await app.close();
    await metrics?.close();
    // Audit rows of the last requests are written before the connection goes.
    await services.audit.settled();
    // The search postings of the last writes too (content/search-sync.ts).
    await services.searchSync.settled();
    await closeServices(services);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : (error?.stack ?? error)}\n`);
  process.exit(1);
});
