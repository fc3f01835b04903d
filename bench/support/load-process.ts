// The load generator in its own process (so it never shares the server's event loop or core):
//   node --import tsx bench/support/load-process.ts < job.json (a LoadJob)  → prints one JSON result line.
// Started through `runLoad` (./load.ts).
import autocannon, { type Result } from 'autocannon';
import type { LoadJob } from './load.ts';

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const job = JSON.parse(Buffer.concat(chunks).toString()) as LoadJob;
const requests = job.requests ?? job.hosts?.map((host) => ({ headers: { ...job.headers, host } }));
// autocannon's own percentiles come from a histogram of whole milliseconds: at the 1–2 ms a cached
// read takes, a p99 ratio of 2.0 can be one rounding step. Each 2xx answer's time is kept here in
// fractions of a millisecond (the response event carries the hrtime measure) and ranked instead.
const latencies: number[] = [];
/** Answers by status code (a write's refusals are told apart from its successes). */
const statuses: Record<number, number> = {};
const cpuBefore = process.cpuUsage();
const result = await new Promise<Result>((resolve, reject) => {
  const instance = autocannon(
    {
      url: job.url,
      connections: job.connections,
      duration: job.durationSec,
      headers: job.headers,
      ...(job.method ? { method: job.method, body: job.body, idReplacement: true } : {}),
      requests: requests?.map((request) => ({ method: 'GET', ...request })),
    },
    (error, done) => (error ? reject(error) : resolve(done)),
  );
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
});
latencies.sort((a, b) => a - b);
const percentile = (p: number) =>
  latencies.length === 0 ? 0 : Number(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2));
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    requestsPerSec: Math.round(result.requests.average),
    p50: percentile(50),
    p99: percentile(99),
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
    // Whether the generator itself was the bound: its own CPU per request.
    generatorCpuMicrosPerRequest: (({ user, system }) => (user + system) / Math.max(1, result.requests.total))(process.cpuUsage(cpuBefore)),
  })}\n`,
);
