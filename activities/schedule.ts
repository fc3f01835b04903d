import type { Services } from '../services/core/context.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { findSiteScope } from '../services/tenancy/platform-db.ts';
import { applyScheduledDate } from '../services/content/schedule-apply.ts';
import type { ScheduleInput } from '../workflows/contracts/schedule.ts';

export function createScheduleActivities(services: Services) {
  async function run(input: ScheduleInput, which: 'publish' | 'unpublish'): Promise<string> {
    const scope = await findSiteScope(services, input.siteId);
    // A deleted or suspended workspace has nothing left to publish.
    if (!scope || scope.workspace.status !== 'active') return 'skipped';
    const ctx = createContext(services, scope, systemPrincipal(`scheduled ${which}`), {
      id: `schedule:${input.entryId}:${input.token}:${which}`,
      ip: '127.0.0.1',
    });
    return applyScheduledDate(ctx, input.entryId, input.token, which);
  }
  return {
    /** Idempotent (token + date checked on the entry): safe to retry. */
    async publishScheduledEntry(input: ScheduleInput): Promise<string> {
      return run(input, 'publish');
    },
    async unpublishScheduledEntry(input: ScheduleInput): Promise<string> {
      return run(input, 'unpublish');
    },
  };
}
