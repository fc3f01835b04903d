import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operationTool } from '../../services/mcp/tools.ts';
import { commentsFeature } from '../../services/comments/feature.ts';
import { designFeature } from '../../services/design/feature.ts';
import { redirectsFeature } from '../../services/redirects/feature.ts';
import { emailTemplatesFeature } from '../../services/email-templates/feature.ts';
import { cookiesFeature } from '../../services/cookies/feature.ts';
import { analyticsFeature } from '../../services/analytics/feature.ts';

const operations = [commentsFeature, designFeature, redirectsFeature, emailTemplatesFeature, cookiesFeature, analyticsFeature].flatMap((f) => [
  ...f.operations,
]);

// No engines needed: the OpenAPI document and the MCP tool list are generated from these schemas,
// so one that cannot be turned into JSON Schema would break both for every caller.
describe('site-config operation schemas', () => {
  it('have unique ids and become MCP tools and JSON Schema (input and output)', () => {
    expect(new Set(operations.map((op) => op.id)).size).toBe(operations.length);
    for (const op of operations) {
      expect(operationTool(op).inputSchema.type, op.id).toBe('object');
      expect(() => z.toJSONSchema(op.output, { io: 'output', unrepresentable: 'any' }), op.id).not.toThrow();
    }
  });

  it('require a capability on every Management route (public only for the comment form, approved comments, the redirect lookup and the design reads)', () => {
    const designReads = [
      'public.design.headers',
      'public.design.templateParts',
      'public.design.templatePart',
      'public.design.template',
      'public.design.widgets',
      'public.design.permalinks',
    ];
    for (const op of operations) {
      if (op.surface === 'public') expect(['public.comments.list', 'public.redirects.resolve', ...designReads]).toContain(op.id);
      else if (op.surface === 'comments') expect(op.id).toBe('comments.submit');
      else expect(op.requires, op.id).toMatch(/^[a-z-]+:[a-z]+$/);
    }
  });
});
