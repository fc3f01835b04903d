import { z } from 'zod';
import { DurationText } from '../core/duration.ts';
import { ClusterLabel } from './placement/placement-ops.ts';
import { chooseCluster } from './placement/rule.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.ts';
import { beginWorkspaceDeletion } from './deletion.ts';
import { getWorkspace } from './lifecycle.ts';
import { requestWorkspace } from './provisioning.ts';
import { startClone } from './backup/clone.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { awaitWorkspaceCommand, sendWorkspaceCommand } from './workspace-actor.ts';
import { AdminInput, HostName, SiteView, TenantView, tenantView } from './views.ts';

// Every lifecycle route hands its step to the workspace actor (`workspace:<id>`), waits on the
// actor a bounded time (LIFECYCLE_WAIT_MS, 5 s by default; a Temporal Update that completes with the
// step) and answers 202 with the workspace as it then is: the end state when the step finished, or
// `provisioning` / `deleting` (poll GET /tenants/{id}) when no worker ran it in time. A repeated
// call is harmless: it answers the same way.

const TenantId = z.object({ id: z.string().min(1) });
const pending =
  'Answers 202 after handing the step to the workspace actor and waiting up to LIFECYCLE_WAIT_MS (5 s): ' +
  '`tenant.status` is the end state when the step finished in time, else the state so far (poll GET /tenants/{id}).';

export const createTenantOp = defineOperation({
  id: 'tenants.create',
  surface: 'manage',
  method: 'POST',
  path: '/tenants',
  summary: 'Create a workspace with its first site and administrator',
  description:
    `Domains are claimed at once, all or none (a taken one is a 409 and nothing is kept); the database, indexes, site and administrator are provisioned by the actor. ${pending} ` +
    'With `fromBackup` (a backup id) or `fromWorkspace` (a workspace id) the new workspace is a clone (docs/backups.md): the archive is verified first (a foreign or corrupted one is a 409 and nothing is written), ' +
    'then 202 with `tenant.status` `provisioning` while the clone workflow copies it (new site ids, the request’s domains and administrator; no keys, sessions or grants of the source; webhook endpoints paused with new secrets).',
  requires: 'platform:manage',
  errors: [409, 503],
  status: 202,
  input: z.object({
    name: z.string().min(1).max(200),
    siteName: z.string().min(1).max(200).optional(),
    domains: z.array(HostName).min(1).max(50),
    admin: AdminInput,
    fromBackup: z.string().min(1).max(200).optional(),
    fromWorkspace: z.string().min(1).max(200).optional(),
    /** Where its database goes (docs/placement.md): a cluster by label, or the emptiest of a region; else the emptiest. */
    cluster: ClusterLabel.optional(),
    region: ClusterLabel.optional(),
  }),
  output: z.object({ tenant: TenantView, site: SiteView }),
  async handler(ctx, { cluster, region, ...input }) {
    const placed = await chooseCluster(ctx.services, { cluster, region });
    if (input.fromBackup !== undefined || input.fromWorkspace !== undefined) {
      if (input.fromBackup !== undefined && input.fromWorkspace !== undefined) throw new BadRequestError('Give fromBackup or fromWorkspace, not both');
      const { workspace, site } = await startClone(ctx.services, ctx.workspace._id, { ...input, cluster: placed });
      return { tenant: tenantView(workspace), site: { ...site, domains: workspace.provisioning!.domains } };
    }
    const requested = await requestWorkspace(ctx.services, { ...input, cluster: placed });
    const command = await sendWorkspaceCommand(ctx.services, requested._id, { kind: 'provision' });
    const workspace = (await awaitWorkspaceCommand(ctx.services, requested._id, command)) ?? requested;
    // Only a lost race for a domain between the claim and a crash abandons provisioning.
    if (workspace.status === 'deleted') throw new ConflictError('Domain already in use');
    const spec = requested.provisioning!;
    return { tenant: tenantView(workspace), site: { id: spec.siteId, name: spec.siteName, domains: spec.domains } };
  },
});

const statusChange = (action: 'suspend' | 'reactivate') =>
  defineOperation({
    id: `tenants.${action}`,
    surface: 'manage',
    method: 'POST',
    path: `/tenants/:id/${action}`,
    summary:
      action === 'suspend'
        ? 'Suspend a workspace: its public API answers 404, every other surface 423'
        : 'Reactivate a suspended workspace: everything answers as before',
    description: `${pending} Suspending a suspended (or reactivating an active) workspace changes nothing; a workspace being provisioned or deleted is a 409.`,
    requires: 'platform:manage',
    errors: [409],
    status: 202,
    input: TenantId,
    output: z.object({ tenant: TenantView }),
    async handler(ctx, { id }) {
      const current = await getWorkspace(ctx.services, id);
      if (id === ctx.workspace._id && action === 'suspend') throw new ConflictError('A workspace cannot suspend itself');
      if (current.status !== 'active' && current.status !== 'suspended') throw new ConflictError(`Workspace is ${current.status}`);
      const from = action === 'suspend' ? 'active' : 'suspended';
      if (current.status !== from) return { tenant: tenantView(current) };
      const command = await sendWorkspaceCommand(ctx.services, id, { kind: action });
      const workspace = (await awaitWorkspaceCommand(ctx.services, id, command)) ?? current;
      return { tenant: tenantView(workspace) };
    },
  });

export const suspendTenant = statusChange('suspend');
export const reactivateTenant = statusChange('reactivate');

export const deleteTenantOp = defineOperation({
  id: 'tenants.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/tenants/:id',
  summary: 'Delete a workspace: stop its work, release its domains, keep its data for the grace period, then purge it',
  description:
    `The workspace stops answering at once (\`deleting\`); the actor cancels its schedules, export runs, backups and pending deliveries and releases its domains. ` +
    'Its data is kept until `tenant.purgeAt` (the grace period: `grace`, else WORKSPACE_DELETE_GRACE, 7 days), when the purge drops its database (after a backup when `finalBackup=true`); ' +
    '`POST /tenants/{id}/undelete` brings it back before. `dropDatabase=true` confirms the purge at once (also of a workspace deleted earlier). ' +
    `${pending} Deleting a deleted workspace again is harmless; a new \`grace\` or \`finalBackup\` replaces the recorded one. ` +
    'A move still copying stops (the workspace stays where it was); while a move switches its cluster (a few seconds): 409.',
  requires: 'platform:manage',
  errors: [409],
  status: 202,
  input: TenantId.extend({
    dropDatabase: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /** How long the data is kept: `7d`, `36h`, `90m`, `30s` (at most 365d); unset: WORKSPACE_DELETE_GRACE. */
    grace: DurationText.optional(),
    finalBackup: z
      .enum(['true', 'false'])
      .optional()
      .transform((v) => (v === undefined ? undefined : v === 'true')),
  }),
  output: z.object({ tenant: TenantView }),
  async handler(ctx, { id, dropDatabase, grace, finalBackup }) {
    if (id === ctx.workspace._id) throw new ConflictError('A workspace cannot delete itself');
    const current = await platformCollections(ctx.services).workspaces.findOne({ _id: id });
    if (!current) throw new NotFoundError();
    // Recorded before the actor runs: the workspace stops answering now, and the worker's
    // reconciler re-sends the command should Temporal not take it.
    await beginWorkspaceDeletion(ctx.services, id, dropDatabase, { graceMs: grace, finalBackup });
    const command = await sendWorkspaceCommand(ctx.services, id, { kind: 'delete', dropDatabase });
    const workspace = (await awaitWorkspaceCommand(ctx.services, id, command)) ?? (await getWorkspace(ctx.services, id));
    return { tenant: tenantView(workspace) };
  },
});
