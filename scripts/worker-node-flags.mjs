// Node flags of every Temporal worker process (services/worker.ts): `npm start`, the benchmarks'
// and tests' worker processes; docker-compose.yml repeats them literally (keep the two equal).
//
// --max-old-space-size=1024: V8 lets the old generation grow to a multiple of the live heap
// before its next full collection, and that multiple is 4 when the heap limit is 2 GB or more
// (Node's default here: about 4 GB) but about 1.6 at 1 GB. A static export's batches leave short-lived
// garbage in the old generation; at 4× it piled up to ~200 MB of resident memory over a
// 10,000-entry export before anything collected it (issue 11, bench/RESULTS.md). The limit is
// ~9× the worker's live heap at that size (idle ~86 MB, peak ~115 MB), docs/plugins.md.
export const WORKER_NODE_FLAGS = ['--max-old-space-size=1024'];
