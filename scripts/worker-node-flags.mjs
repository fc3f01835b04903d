// Node flags of every Temporal worker process (services/worker.ts): `npm start`, the benchmarks'
// and tests' worker processes; docker-compose.yml repeats them literally (test/platform/production-build.test.ts
// checks the two are equal).
//
// A static export's batches leave short-lived garbage behind, and the worker's resident memory
// grew ~180 MB over a 10,000-entry export before anything collected it (issue 11, target
// < 128 MB; bench/RESULTS.md). Live data grew ~28 MB of that.
// --max-old-space-size=1024: V8 lets the old generation grow to a multiple of the live heap before
//   its next full collection; the multiple is 4 with a heap limit of 2 GB or more (Node's default
//   on a machine with that much memory) and about 1.6 at 1 GB. The limit is ~9× the worker's live
//   heap at that size (idle ~83 MB, peak ~111 MB; ~2.4 MB more per 1,000 entries exported).
// --max-semi-space-size=2 (MB, default 16): the young generation's two halves are resident once
//   an export has grown them; 8 cut an export's growth by another ~15 MB, no slower. 2 (issue 25,
//   session 9): the compiled worker's idle RSS 224 → 205 MB and its peak over a 10,000-entry, 100 MB
//   backup and restore 302 → 274 MB (target ≤ 256 MB), the throughput ratios unchanged within the
//   machine's noise (bench/RESULTS.md, "Workspace backup and restore").
export const WORKER_NODE_FLAGS = ['--max-old-space-size=1024', '--max-semi-space-size=2'];
