// A real gateway process for the multi-gateway tests: same wiring as services/gateway.ts, on the
// database prefix and secret given in the environment; prints its port, stops on SIGTERM.
// SIGUSR2 cuts its change feed for FEED_CUT_MS (the fallback test), as a lost connection would.
import { loadConfig } from '../../services/core/config.ts';
import { closeServices } from '../../services/core/services.ts';
import { createRuntime } from '../../services/runtime.ts';

const runtime = await createRuntime(loadConfig());
await runtime.services.changeFeed.start();
const app = await runtime.buildApp({ logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`PORT=${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGUSR2', () => {
  runtime.services.changeFeed.cut(Number(process.env.FEED_CUT_MS ?? 60_000));
  process.stdout.write('CUT\n');
});
process.on('SIGTERM', async () => {
  await app.close();
  await closeServices(runtime.services);
  process.exit(0);
});
