import path from 'node:path';
import { spawn } from 'node:child_process';

/** The checks the issue asks for: no 5xx, statuses and content types declared, bodies as documented. */
export const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance'];

export interface FuzzPass {
  name: string;
  /** Where the document is served, relative to the origin; its operations are read from it. */
  document: string;
  /** The base the document's paths are relative to. */
  base: string;
  key?: string;
  maxExamples: number;
  include?: string[];
  /** Schemathesis phases; the coverage phase (every boundary of every schema) is the costly one. */
  phases?: string[];
  exclude?: string[];
}

export interface FuzzResult {
  exitCode: number;
  operations: number;
  testCases: number;
  seconds: number;
  /** The failures section of the report: per operation, the check, what came back and a curl line. */
  failures: string;
  output: string;
}

const number = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);

/** Runs schemathesis once over one document and reads its summary. */
export async function runFuzzPass(bin: string, origin: string, pass: FuzzPass, seed: number): Promise<FuzzResult> {
  const args = [
    'run',
    `${origin}${pass.document}`,
    '--url',
    `${origin}${pass.base}`,
    '--checks',
    CHECKS.join(','),
    '--phases',
    (pass.phases ?? ['examples', 'coverage', 'fuzzing']).join(','),
    '--seed',
    String(seed),
    '--max-examples',
    String(pass.maxExamples),
    // One worker: schemathesis' workers are threads, and CPython 3.11 keeps one AST-construction depth
    // counter per interpreter, so two threads parsing at once (hypothesis reads lambda sources)
    // fail with "AST constructor recursion depth mismatch" (python/cpython#106905).
    '--workers',
    '1',
    '--request-timeout',
    '30',
    '--suppress-health-check',
    'all',
    '--warnings',
    'off',
    '--no-color',
    ...(pass.key ? ['--header', `Authorization: Bearer ${pass.key}`] : []),
    ...(pass.include ?? []).flatMap((id) => ['--include-operation-id', id]),
    ...(pass.exclude ?? []).flatMap((id) => ['--exclude-operation-id', id]),
  ];
  const started = Date.now();
  // The hooks module teaches schemathesis the NDJSON body of the content import.
  const hooks = { SCHEMATHESIS_HOOKS: 'schemathesis_hooks', PYTHONPATH: [import.meta.dirname, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter) };
  const child = spawn(bin, args, { env: { ...process.env, ...hooks, NO_COLOR: '1', COLUMNS: '120' } });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  // A fuzzer that cannot start emits 'error' and may never emit 'close': the pass fails with why.
  const exitCode = await new Promise<number>((resolve) => {
    child.on('close', (code) => resolve(code ?? 1));
    child.on('error', (error) => {
      output += `\nschemathesis did not start: ${error.message}\n`;
      resolve(1);
    });
  });
  const seconds = (Date.now() - started) / 1000;
  const start = output.search(/^=+ (FAILURES|ERRORS) =+$/m);
  const end = output.search(/^=+ (WARNINGS|SUMMARY) =+$/m);
  const failures = start >= 0 ? output.slice(start, end > start ? end : undefined).trim() : '';
  return {
    exitCode,
    operations: number(output, /Tested:\s+(\d+)/),
    testCases: number(output, /(\d+) generated/),
    seconds,
    failures,
    output,
  };
}
