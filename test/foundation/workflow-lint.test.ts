import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

/** The lint rule that keeps workflow code replayable must actually fire (npm test runs the linter). */
describe('workflow lint rules', () => {
  const lint = async (code: string) => {
    const eslint = new ESLint();
    const [result] = await eslint.lintText(code, { filePath: 'workflows/lint-probe.ts' });
    return result.messages.map((message) => message.ruleId);
  };

  it('forbids Node built-ins in workflow files', async () => {
    expect(await lint("import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n")).toContain('no-restricted-imports');
  });

  it('forbids value imports of activities but allows type imports', async () => {
    expect(await lint("import { createActivities } from '../activities/index.ts';\nexport const x = createActivities;\n")).toContain('no-restricted-imports');
    expect(await lint("import type { createActivities } from '../activities/index.ts';\nexport type X = typeof createActivities;\n")).toEqual([]);
  });
});
