// A load generator in its own process (so its requests never share the server's event loop or core):
//   node --import tsx bench/support/api-client-process.ts < job.json (an ApiJob) → prints one JSON result line.
// `grow`: `count` entries created then published through the Management API by `clients` concurrent
// clients. `crawl`: the Public Content API's list walked page after page (`limit` per page) by its cursor.
import { callJson } from './http-call.ts';

export type ApiJob =
  | { kind: 'grow'; address: string; host: string; key: string; count: number; clients: number; prefix: string }
  | { kind: 'crawl'; address: string; host: string; pages: number; limit: number };

export interface ApiResult {
  items: number;
  seconds: number;
  perSec: number;
  failures: number;
  /** crawl: milliseconds per page, median */
  pageMs?: number;
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const job = JSON.parse(Buffer.concat(chunks).toString()) as ApiJob;

const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) => callJson(job.address, method, path, headers, body);

let items = 0;
let failures = 0;
const pageTimes: number[] = [];
const started = performance.now();
if (job.kind === 'grow') {
  const headers = { host: job.host, authorization: `Bearer ${job.key}` };
  let next = 0;
  await Promise.all(
    Array.from({ length: job.clients }, async () => {
      while (next < job.count) {
        const i = next++;
        const created = await call('POST', '/api/manage/v1/content', headers, {
          title: `Grown ${job.prefix} ${i}`,
          slug: `grown-${job.prefix}-${i}`,
          excerpt: 'A short summary of the entry.',
          blocks: { version: 1, blocks: [{ type: 'paragraph', text: 'Lorem ipsum dolor sit amet. '.repeat(8) }] },
          fields: { rank: i },
        });
        const published = created.status === 201 ? await call('POST', `/api/manage/v1/content/${String(created.body.id)}/publish`, headers, {}) : created;
        if (published.status === 200) items++;
        else failures++;
      }
    }),
  );
} else {
  let cursor: string | null = null;
  for (let page = 0; page < job.pages; page++) {
    const at = performance.now();
    const query: string = `/api/v1/content?limit=${job.limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const answer = await call('GET', query, { host: job.host });
    pageTimes.push(performance.now() - at);
    if (answer.status !== 200) {
      failures++;
      break;
    }
    items += (answer.body.items as unknown[]).length;
    cursor = answer.body.nextCursor as string | null;
    if (!cursor) break;
  }
}
const seconds = (performance.now() - started) / 1000;
pageTimes.sort((a, b) => a - b);
const result: ApiResult = {
  items,
  seconds: Number(seconds.toFixed(2)),
  perSec: Math.round(items / seconds),
  failures,
  ...(pageTimes.length ? { pageMs: Number(pageTimes[Math.floor(pageTimes.length / 2)]!.toFixed(1)) } : {}),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
