// An HTTP download client in its own process (so it never shares the server's event loop):
//   node --import tsx bench/support/download-process.ts '<json { url, headers }>' → one JSON line.
const job = JSON.parse(process.argv[2]) as { url: string; headers?: Record<string, string> };
const started = performance.now();
const res = await fetch(job.url, { headers: job.headers });
let bytes = 0;
for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
process.stdout.write(`${JSON.stringify({ status: res.status, bytes, ms: performance.now() - started })}\n`);
