import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSchemathesis } from '../../scripts/fuzzer.mjs';
import { startFuzzTarget, type FuzzTarget } from './fuzz-world.ts';
import { runFuzzPass, type FuzzPass, type FuzzResult } from './fuzz-run.ts';

/**
 * The API as a fuzzer sees it (issue 10): schemathesis over every OpenAPI document the service
 * serves, every operation in them (read from the documents at run time, so new operations are
 * covered without touching this file), with a key holding every capability and one holding none.
 * Zero server errors; every status, content type and body as documented.
 *
 *   FUZZ_SEED=<n> npx vitest run test/conformance/fuzz.test.ts     replay a seed
 *   FUZZ_SEED=random npx vitest run test/conformance/fuzz.test.ts  a fresh seed (printed)
 *   FUZZ_EXAMPLES=<n> ...                                           more cases per operation
 */
const FIXED_SEED = 20261123;
const seed = process.env.FUZZ_SEED === 'random' ? randomInt(1, 2 ** 31) : Number(process.env.FUZZ_SEED ?? FIXED_SEED);
const scale = Number(process.env.FUZZ_EXAMPLES ?? 1);

/**
 * Operations that can take the fuzzer's own credentials away (disable or delete the key's owner)
 * run in a pass of their own, after everything else, so they cannot hide the rest behind 401s.
 */
const SELF_HARM = ['users.update', 'users.delete'];

let target: FuzzTarget;
let bin: string;
const results: Array<{ pass: string; result: FuzzResult }> = [];

beforeAll(async () => {
  bin = ensureSchemathesis((line) => console.log(line));
  target = await startFuzzTarget();
  console.log(`[fuzz] seed ${seed}${process.env.FUZZ_SEED === 'random' ? ' (fresh: replay with FUZZ_SEED=' + seed + ')' : ''}`);
}, 300_000);

afterAll(async () => {
  for (const { pass, result } of results) {
    console.log(`[fuzz] ${pass}: ${result.operations} operations, ${result.testCases} generated requests, ${result.seconds.toFixed(0)} s`);
  }
  const total = results.reduce((sum, { result }) => ({ ops: sum.ops + result.operations, cases: sum.cases + result.testCases, s: sum.s + result.seconds }), {
    ops: 0,
    cases: 0,
    s: 0,
  });
  console.log(`[fuzz] total: ${total.ops} operation runs, ${total.cases} generated requests, ${total.s.toFixed(0)} s`);
  await target?.world.close();
});

function passes(t: FuzzTarget): FuzzPass[] {
  const manage = { document: '/api/manage/v1/openapi.json', base: '/api/manage/v1' };
  return [
    { name: 'public, anonymous', document: '/api/v1/openapi.json', base: '/api/v1', maxExamples: 10 * scale },
    { name: 'comments, anonymous', document: '/api/comments/v1/openapi.json', base: '/api/comments/v1', maxExamples: 10 * scale },
    { name: 'management, every capability', ...manage, key: t.fullKey, maxExamples: 4 * scale, exclude: SELF_HARM },
    // Every operation answers 403 before reading its input: a few random cases each say enough.
    { name: 'management, no capability', ...manage, key: t.emptyKey, maxExamples: 3 * scale, phases: ['examples', 'fuzzing'] },
    { name: 'management, owner changes last', ...manage, key: t.fullKey, maxExamples: 4 * scale, include: SELF_HARM },
  ];
}

describe('OpenAPI-driven fuzzing (schemathesis)', () => {
  // One test per pass, in order: the last one may take the full key's owner away.
  for (const name of [
    'public, anonymous',
    'comments, anonymous',
    'management, every capability',
    'management, no capability',
    'management, owner changes last',
  ]) {
    it(`answers as documented: ${name}`, async () => {
      const pass = passes(target).find((p) => p.name === name)!;
      const result = await runFuzzPass(bin, target.origin, pass, seed);
      results.push({ pass: name, result });
      const replay = `replay: FUZZ_SEED=${seed} npx vitest run test/conformance/fuzz.test.ts -t '${name}'`;
      expect(result.operations, `no operation tested; schemathesis said:\n${result.output.slice(-3000)}`).toBeGreaterThan(0);
      expect(result.exitCode, `${result.failures || result.output.slice(-6000)}\n\n${replay}`).toBe(0);
    }, 600_000);
  }
});
