import { z } from 'zod';
import type { OperationContext } from '../core/context.ts';
import { defineOperation, type Operation } from '../core/operation.ts';
import { hasCapability } from '../core/principal.ts';
import { resolveLocale } from '../languages/languages.ts';
import { cachedResponse, publicState, type PublicState } from './state.ts';

/** What every public handler gets besides its input: the resolved locale and whether this is a preview. */
export interface PublicView {
  state: PublicState;
  locale: string;
  preview: boolean;
}

const PreviewParam = z.enum(['1', 'true', '0', 'false']).optional().describe('1: show working revisions (editor session only)');

/** Only a signed-in user who may edit content gets a preview; for anyone else the flag is ignored. */
function wantsPreview(ctx: OperationContext, flag: string | undefined): boolean {
  return (flag === '1' || flag === 'true') && ctx.principal.kind === 'user' && hasCapability(ctx.principal, 'content:update');
}

export interface PublicOperationSpec<S extends z.ZodRawShape, O extends z.ZodType> {
  id: string;
  path: string;
  summary: string;
  description?: string;
  input: z.ZodObject<S>;
  output: O;
  rateLimit?: { perMinute: number; by: 'ip' };
  handler(ctx: OperationContext, input: z.output<z.ZodObject<S>>, view: PublicView): Promise<z.input<O>>;
}

/**
 * The shared runner of every Public Content API read (REST and GraphQL both go through it):
 * locale resolution, preview, and the response cache (never for previews, which show unpublished
 * work). The Public API switch is not read here: the operation runner's door (the access gate)
 * answers 404 before any public operation runs.
 */
export function definePublicOperation<S extends z.ZodRawShape, O extends z.ZodType>(spec: PublicOperationSpec<S, O>) {
  const input = spec.input.extend({ preview: PreviewParam });
  return defineOperation({
    id: spec.id,
    surface: 'public',
    method: 'GET',
    path: spec.path,
    summary: spec.summary,
    description: spec.description,
    requires: 'public',
    input,
    output: spec.output,
    rateLimit: spec.rateLimit,
    async handler(ctx, raw) {
      const { preview: flag, ...rest } = raw as { preview?: string } & Record<string, unknown>;
      const state = await publicState(ctx);
      const params = rest as z.output<z.ZodObject<S>>;
      const view: PublicView = {
        state,
        locale: resolveLocale(state.languages, typeof rest.locale === 'string' ? rest.locale : undefined),
        preview: wantsPreview(ctx, flag),
      };
      if (view.preview) return spec.handler(ctx, params, view);
      const key = `${spec.id}|${view.locale}|${JSON.stringify(rest, Object.keys(rest).sort())}`;
      return cachedResponse(ctx, state, key, () => spec.handler(ctx, params, view));
    },
  }) as unknown as Operation;
}
