import { Context } from '@temporalio/activity';
import type { Services } from '../services/core/context.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { findSiteScope } from '../services/tenancy/platform-db.ts';
import { finishTermRemoval, forgetTermRemovalJob, removeTermBatch } from '../services/content/term-removal.ts';
import { termRemovalWorkflowId } from '../workflows/contracts/term-removal.ts';
import type { TermRemovalInput } from '../workflows/contracts/term-removal.ts';

export function createTermRemovalActivities(services: Services) {
  async function context(input: TermRemovalInput) {
    const scope = await findSiteScope(services, input.siteId, input.workspaceId);
    if (!scope || scope.workspace.status === 'deleting' || scope.workspace.status === 'deleted') return null;
    // The caller's scope was checked over every entry before the job started (terms-ops.ts).
    return createContext(services, scope, systemPrincipal(`term removal ${input.label}`), {
      id: `term-removal:${input.taxonomy}:${input.termId ?? '*'}`,
      ip: '127.0.0.1',
    });
  }
  return {
    /** Idempotent: changes up to `batch` entries that still have the term; how many it found and changed. */
    async removeTermFromEntries(input: TermRemovalInput): Promise<{ found: number; changed: number }> {
      const ctx = await context(input);
      if (!ctx) return { found: 0, changed: 0 };
      // A heartbeat per group of entries: a worker killed mid-batch is noticed in seconds, not at the timeout.
      return removeTermBatch(ctx, input, input.batch, () => Context.current().heartbeat());
    },
    /** Idempotent: moves the children up and deletes the term (or the taxonomy and its terms), then forgets the job. */
    async finishTermRemoval(input: TermRemovalInput): Promise<void> {
      const ctx = await context(input);
      if (!ctx) return;
      await finishTermRemoval(ctx, input);
      await forgetTermRemovalJob(ctx.db, termRemovalWorkflowId(input.workspaceId, input.siteId, input.taxonomy, input.termId));
    },
  };
}
