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

// The environment of every worker process besides the flags: glibc's allocator, read once at start
// (so it cannot be set from inside the process). docker-compose.yml repeats it (checked with the flags).
// MALLOC_ARENA_MAX=2: glibc gives each thread that allocates an arena of its own, up to 8 per core;
//   the worker runs ~16 threads (libuv's pool, V8's, the Temporal core's runtime, the workflow
//   thread), and memory freed in an arena stays resident in it.
// MALLOC_MMAP_THRESHOLD_=65536: blocks of 64 KB and more (stream chunks, GridFS chunks, driver
//   messages, insert batches) are mapped on their own and given back when freed; glibc's default
//   threshold rises with the largest block freed (up to 32 MB), after which such buffers come from
//   the arenas and their memory stays resident once the copy has passed through it.
// Both measured on the compiled worker over a 10,000-entry, 100 MB backup and restore (issue 25,
// session 10; bench/RESULTS.md): idle 188 → 162 MB, peak 258 → 216 MB (ARENA_MAX alone 171 / 229,
// the threshold alone 164 / 209).
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' };
