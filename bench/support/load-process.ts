// The load generator in its own process (so it never shares the server's event loop or core):
//   node --import tsx bench/support/load-process.ts '<json LoadJob>'  → prints one JSON result line.
import autocannon from 'autocannon';

interface LoadJob {
  url: string;
  connections: number;
  durationSec: number;
  headers?: Record<string, string>;
  /** Host headers to rotate through, one per request on each connection (multi-tenant runs). */
  hosts?: string[];
}

const job = JSON.parse(process.argv[2]) as LoadJob;
const result = await autocannon({
  url: job.url,
  connections: job.connections,
  duration: job.durationSec,
  headers: job.headers,
  requests: job.hosts?.map((host) => ({ headers: { ...job.headers, host } })),
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
