import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', '.engines/**', 'bench/out/**', 'engines/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The Temporal client's call context is an AsyncLocalStorage that, once enabled, costs every
    // promise of the process a hook: deadlines and abort signals go through services.temporal.bounded
    // (core/engines.ts), which disables it again.
    files: ['services/**/*.ts', 'activities/**/*.ts'],
    ignores: ['services/core/engines.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression > MemberExpression.callee > Identifier.property[name=/^with(Deadline|AbortSignal|Metadata)$/]',
          message: 'Temporal calls under a deadline or signal go through services.temporal.bounded (core/engines.ts says why; metadata would be added there).',
        },
      ],
    },
  },
  {
    // Workflow code is replayed: it must be deterministic, so no Node built-ins and activities
    // only as types (the real functions run in the worker, never inside the workflow sandbox).
    files: ['workflows/**/*.ts'],
    // `lint-probe.ts` is the virtual file of test/foundation/workflow-lint.test.ts.
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['workflows/lint-probe.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows must be deterministic: no Node built-ins.' })),
          patterns: [
            {
              group: ['**/activities/**', '**/activities', '**/services/**'],
              allowTypeImports: true,
              message: 'Workflows import activities (and services) as types only: `import type`.',
            },
          ],
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
);
