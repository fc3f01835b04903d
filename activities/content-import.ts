import { Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { findSiteScope } from '../services/tenancy/platform-db.ts';
import { finishImport, importBatch } from '../services/content/import-run.ts';
import { importsCollection } from '../services/content/import-model.ts';
import type { ContentImportInput } from '../workflows/contracts/content-import.ts';

/** How long one activity imports batches before it hands back to the workflow (whose history then records the progress). */
const ACTIVITY_SPAN_MS = 20_000;

export function createContentImportActivities(services: Services) {
  async function context(input: ContentImportInput) {
    const scope = await findSiteScope(services, input.siteId, input.workspaceId);
    if (!scope || scope.workspace.status === 'deleting' || scope.workspace.status === 'deleted') return null;
    // The importing key's scope is applied per line from the import's document (import-run.ts).
    return createContext(services, scope, systemPrincipal(`content import ${input.importId}`), { id: `content-import:${input.importId}`, ip: '127.0.0.1' });
  }
  return {
    /**
     * Batches from the import's checkpoint (each idempotent, each moving the checkpoint) for up to
     * `ACTIVITY_SPAN_MS`: the next batch's lines are read and checked while one writes, which one
     * batch per activity could not do. Answers whether the import is over, and its state.
     */
    async importContentBatch(input: ContentImportInput): Promise<{ done: boolean; state: string }> {
      const ctx = await context(input);
      if (!ctx) return { done: true, state: 'cancelled' };
      const until = Date.now() + ACTIVITY_SPAN_MS;
      const heartbeat = () => Context.current().heartbeat();
      let step: Awaited<ReturnType<typeof importBatch>> = { done: false };
      do {
        heartbeat();
        step = await importBatch(ctx, input.importId, input.batch, heartbeat, step.ahead);
      } while (!step.done && Date.now() < until);
      const state = step.done
        ? ((await importsCollection(ctx.db).findOne({ _id: input.importId }, { projection: { state: 1 } }))?.state ?? 'failed')
        : 'running';
      return { done: step.done, state };
    },
    /** Marks the import failed with why (its file dropped). Idempotent. */
    async failContentImport(input: ContentImportInput, error: string): Promise<void> {
      const ctx = await context(input);
      const job = ctx ? await importsCollection(ctx.db).findOne({ _id: input.importId }) : null;
      if (ctx && job) await finishImport(ctx, job, 'failed', error);
    },
  };
}
