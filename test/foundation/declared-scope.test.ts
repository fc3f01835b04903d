import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { features } from '../../services/features.ts';
import { defineOperation } from '../../services/core/operation.ts';
import { undeclaredScopeOperations } from '../../services/core/scope.ts';

/**
 * Key scope is declared on the operation (`scope:`), never applied by hand: an operation that
 * needs a content, media, comments or analytics capability and declares nothing would let a
 * scoped key see everything. This test holds the registry to that rule.
 */
describe('declared scope', () => {
  const operations = features.flatMap((feature) => feature.operations);

  it('every operation on scoped data declares its scope', () => {
    expect(operations.length).toBeGreaterThan(100);
    expect(undeclaredScopeOperations(operations)).toEqual([]);
  });

  it('negative control: an operation on scoped data without a declaration is reported', () => {
    const forgetful = defineOperation({
      id: 'probe.forgotScope',
      surface: 'manage',
      method: 'GET',
      path: '/probe-forgot',
      summary: 'a list that forgot its scope',
      requires: ['settings:read', 'media:read'],
      input: z.object({}),
      output: z.object({}),
      handler: async () => ({}),
    });
    const unscopedData = { ...forgetful, id: 'probe.settings', requires: 'settings:read' as const };
    expect(undeclaredScopeOperations([...operations, forgetful, unscopedData])).toEqual(['probe.forgotScope']);
    expect(undeclaredScopeOperations([{ ...forgetful, scope: 'none' }])).toEqual([]);
  });
});
