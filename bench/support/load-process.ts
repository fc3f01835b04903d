// The load generator in its own process (so it never shares the server's event loop or core):
//   node --import tsx bench/support/load-process.ts < job.json (a LoadJob)  → prints one JSON result line.
// Started through `runLoad` (./load.ts).
import autocannon from 'autocannon';
import type { LoadJob } from './load.ts';

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const job = JSON.parse(Buffer.concat(chunks).toString()) as LoadJob;
const requests = job.requests ?? job.hosts?.map((host) => ({ headers: { ...job.headers, host } }));
const result = await autocannon({
  url: job.url,
  connections: job.connections,
  duration: job.durationSec,
  headers: job.headers,
  requests: requests?.map((request) => ({ method: 'GET', ...request })),
});
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    requestsPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  })}\n`,
);
