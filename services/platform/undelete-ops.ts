import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { ConflictError } from '../core/errors.ts';
import { getWorkspace } from './lifecycle.ts';
import { awaitWorkspaceCommand, sendWorkspaceCommand } from './workspace-actor.ts';
import { TenantView, tenantView } from './views.ts';
import type { Workspace } from '../core/tenants.ts';

const purged = (workspace: Workspace) => Boolean(workspace.purgedAt || workspace.databaseDropped);
const PURGED = 'Workspace was purged: its data is gone and it cannot be undeleted';

export const undeleteTenantOp = defineOperation({
  id: 'tenants.undelete',
  surface: 'manage',
  method: 'POST',
  path: '/tenants/:id/undelete',
  summary: 'Bring a deleted workspace back before its purge, as it was',
  description:
    'A deleted (or deleting) workspace whose data is still kept comes back with the status it had, its data, keys and sessions, ' +
    'its entry and backup schedules, and each of its domains that no other site claimed meanwhile: the others are named in ' +
    '`domainsNotRestored` (and removed from their site). Pending webhook deliveries failed at the deletion stay failed (redeliver them). ' +
    'Answers 202 after waiting up to LIFECYCLE_WAIT_MS for the workspace actor (`tenant.status` still `deleted`: poll GET /tenants/{id}). ' +
    'A purged workspace, or one deleted while it was being provisioned, is a 409; undeleting a live workspace changes nothing.',
  requires: 'platform:manage',
  errors: [409],
  status: 202,
  input: z.object({ id: z.string().min(1) }),
  output: z.object({ tenant: TenantView, domainsNotRestored: z.array(z.string()) }),
  async handler(ctx, { id }) {
    const current = await getWorkspace(ctx.services, id);
    if (current.status === 'active' || current.status === 'suspended') return { tenant: tenantView(current), domainsNotRestored: [] };
    if (purged(current)) throw new ConflictError(PURGED);
    if (current.status === 'provisioning' || !current.deletion?.previousStatus)
      throw new ConflictError('Workspace cannot be undeleted: its deletion recorded no state to bring back');
    const command = await sendWorkspaceCommand(ctx.services, id, { kind: 'undelete' });
    const workspace = (await awaitWorkspaceCommand(ctx.services, id, command)) ?? current;
    // The purge ran first (it was due, or being run when the undelete came): nothing changed.
    if (purged(workspace)) throw new ConflictError(PURGED);
    const restored = workspace.status === 'active' || workspace.status === 'suspended';
    return { tenant: tenantView(workspace), domainsNotRestored: restored ? (workspace.undeletion?.domainsNotRestored ?? []) : [] };
  },
});
