// Media: upload and download of a 200 MB file through the gateway, and small-file delivery.
//   NODE_OPTIONS=--expose-gc npx tsx bench/media.ts     (engines from MONGODB_URI / TEMPORAL_ADDRESS, else local ones)
// Env: BENCH_MEDIA_MB (200), BENCH_DURATION (5 s per autocannon round), BENCH_ROUNDS (3).
// Reports: peak RSS growth of this process (it is the gateway) during upload and download
// (target < 64 MB), download throughput against reading the same bytes straight from GridFS in
// the same run, and req/s of a small file against a bare Fastify route serving it from memory.
import { request } from 'node:http';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { startBenchWorld } from './support/world.ts';
import { compare, measure, table } from './support/load.ts';
import { createApiKey } from '../test/support/access.ts';
import type { World } from '../test/support/world.ts';
import { createSiteResolver } from '../services/tenancy/site-resolver.ts';
import { mediaBucket } from '../services/media/model.ts';
import { median } from './support/median.ts';

const SIZE = Number(process.env.BENCH_MEDIA_MB ?? 200) * 1_000_000;

/** A PDF-headed byte stream of `size` bytes made on the fly, so the client holds almost nothing. */
function generated(size: number): Readable {
  let sent = 0;
  const block = Buffer.alloc(64 * 1024, 0x20);
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const chunk = Buffer.from(block.subarray(0, Math.min(block.length, size - sent)));
      if (sent === 0) chunk.write('%PDF-1.4\n', 'latin1');
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

/**
 * Samples RSS every 10 ms while `work` runs. Growth is counted from `idle`, the RSS of the warmed-up
 * gateway before the large transfers, so garbage left by an earlier phase counts against a later one.
 */
async function peakRss<T>(idle: number, work: () => Promise<T>): Promise<{ value: T; peakMb: number; seconds: number }> {
  globalThis.gc?.();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  const began = performance.now();
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, peakMb: Math.max(0, peak - idle) / 1e6, seconds: (performance.now() - began) / 1000 };
  } finally {
    clearInterval(timer);
  }
}

function uploadFile(origin: URL): Promise<{ status: number; body: string }> {
  const boundary = '----benchmedia';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/api/manage/v1/media', origin),
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + SIZE + tail.length,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write(head);
    const source = generated(SIZE);
    source.on('end', () => req.end(tail));
    source.pipe(req, { end: false });
  });
}

async function drain(stream: AsyncIterable<Buffer | string>): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += chunk.length;
  return bytes;
}

function download(url: URL): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, (res) => drain(res).then(resolve, reject))
      .on('error', reject)
      .end();
  });
}

const world = await startBenchWorld();
const app = world.app;
const origin = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
// A real key of the bench administrator (the helper only needs `services` and `admin`).
const { key: TOKEN } = await createApiKey(world as unknown as World, { capabilities: ['media:upload', 'media:read'] });
const scope = (await createSiteResolver(world.services).resolve('localhost'))!;
const db = world.services.workspaceDb(scope.workspace);
const mb = (bytes: number, seconds: number) => bytes / 1e6 / seconds;

/** Small files: the gateway's file route against a bare Fastify route sending the same bytes. */
async function smallFiles(label: string, warm = true) {
  const small = Buffer.alloc(10_000, 0x20);
  small.write('%PDF-1.4\n', 'latin1');
  const smallUpload = await app.inject({
    method: 'POST',
    url: '/api/manage/v1/media',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'multipart/form-data; boundary=x' },
    payload: Buffer.concat([
      Buffer.from('--x\r\nContent-Disposition: form-data; name="file"; filename="small.pdf"\r\n\r\n'),
      small,
      Buffer.from('\r\n--x--\r\n'),
    ]),
  });
  const smallItem = smallUpload.json() as { url: string };
  const bare = Fastify();
  bare.get('/small.pdf', async (_req, reply) => reply.type('application/pdf').send(small));
  const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });
  const durationSec = Number(process.env.BENCH_DURATION ?? 5);
  const targets = [
    { name: 'bare Fastify route, 10 kB from memory', url: `${bareAddress}/small.pdf` },
    { name: `gateway /media/files, 10 kB from GridFS, ${label}`, url: new URL(smallItem.url, origin).toString() },
  ];
  // Without warm-up (a fixed number of requests) when the target is known to be slow: every
  // measurement stays bounded by its duration.
  const [baseline, served] = warm
    ? await compare(targets, { connections: 10, durationSec })
    : [
        await measure(targets[0].name, targets[0].url, { connections: 10, durationSec }),
        await measure(targets[1].name, targets[1].url, { connections: 10, durationSec }),
      ];
  await bare.close();
  return table([baseline, served], baseline);
}

try {
  const smallEmpty = await smallFiles('library otherwise empty');
  globalThis.gc?.();
  const idle = process.memoryUsage().rss;
  const up = await peakRss(idle, () => uploadFile(origin));
  if (up.value.status !== 201) throw new Error(`upload failed: ${up.value.status} ${up.value.body}`);
  const item = JSON.parse(up.value.body) as { id: string; url: string; size: number };

  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const gatewayRuns: number[] = [];
  const directRuns: number[] = [];
  let downloadPeak = 0;
  let directPeak = 0;
  // The gateway's downloads first, so what the driver's own reader leaves in memory (it fetches
  // about 25 MB of chunks per batch) cannot count against the gateway.
  for (let round = 0; round < rounds; round++) {
    const viaGateway = await peakRss(idle, () => download(new URL(item.url, origin)));
    if (viaGateway.value !== SIZE) throw new Error('short read via the gateway');
    gatewayRuns.push(mb(SIZE, viaGateway.seconds));
    downloadPeak = Math.max(downloadPeak, viaGateway.peakMb);
  }
  for (let round = 0; round < rounds; round++) {
    const direct = await peakRss(idle, () => drain(mediaBucket(db).openDownloadStream(item.id as never)));
    if (direct.value !== SIZE) throw new Error('short read from GridFS');
    directRuns.push(mb(SIZE, direct.seconds));
    directPeak = Math.max(directPeak, direct.peakMb);
  }
  const direct = median(directRuns);
  const gateway = median(gatewayRuns);

  const lines = [
    `| measurement | value |`,
    `|---|---|`,
    `| file size | ${(SIZE / 1e6).toFixed(0)} MB |`,
    `| upload time | ${up.seconds.toFixed(1)} s (${mb(SIZE, up.seconds).toFixed(1)} MB/s) |`,
    `| RSS of the warmed-up gateway before the transfers | ${(idle / 1e6).toFixed(0)} MB |`,
    `| upload: peak RSS growth of the gateway | ${up.peakMb.toFixed(1)} MB (target < 64) |`,
    `| download: peak RSS growth of the gateway | ${downloadPeak.toFixed(1)} MB (target < 64) |`,
    `| download via gateway (median of ${rounds}) | ${gateway.toFixed(1)} MB/s |`,
    `| read straight from GridFS with the driver's reader (median of ${rounds}) | ${direct.toFixed(1)} MB/s |`,
    `| (for comparison) peak RSS growth while the driver's reader runs | ${directPeak.toFixed(1)} MB |`,
    `| download ratio gateway / direct GridFS | ${(gateway / direct).toFixed(2)} |`,
  ];
  console.log(lines.join('\n'));
  console.log();
  console.log(smallEmpty);
  console.log();
  console.log(await smallFiles(`after the ${(SIZE / 1e6).toFixed(0)} MB file`, false));
} finally {
  await world.close();
}
