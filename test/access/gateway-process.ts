// A real gateway process for the shared-rate-budget test: same wiring as services/gateway.ts, on
// the database prefix and secret given in the environment; prints its port, stops on SIGTERM.
import { loadConfig } from '../../services/core/config.ts';
import { closeServices } from '../../services/core/services.ts';
import { createRuntime } from '../../services/runtime.ts';

const runtime = await createRuntime(loadConfig());
const app = await runtime.buildApp({ logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`PORT=${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await closeServices(runtime.services);
  process.exit(0);
});
