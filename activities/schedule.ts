import type { Services } from '../services/core/context.ts';
import { createContext } from '../services/core/context.ts';
import { systemPrincipal } from '../services/core/principal.ts';
import { findSiteScope } from '../services/tenancy/platform-db.ts';
import { applyScheduledDate } from '../services/content/schedule-apply.ts';
import type { ScheduleInput } from '../workflows/contracts/schedule.ts';

export function createScheduleActivities(services: Services) {
  async function run(input: ScheduleInput, which: 'publish' | 'unpublish'): Promise<string> {
    const scope = await findSiteScope(services, input.siteId);
    // A deleted workspace has nothing left to publish. A suspended one keeps its dates: the activity
    // fails and Temporal retries it (backing off up to 5 minutes) until the workspace is active again,
    // so a date that passed meanwhile fires at reactivation and its revision says it was late.
    if (!scope || scope.workspace.status === 'deleting' || scope.workspace.status === 'deleted') return 'skipped';
    if (scope.workspace.status !== 'active') throw new Error(`workspace ${input.workspaceId} is ${scope.workspace.status}: the ${which} date waits`);
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
