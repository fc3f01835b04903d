import { z } from 'zod';
import { defineOperation } from '../../core/operation.ts';
import { CLUSTER_LABEL } from '../../core/clusters.ts';
import { moveView, MoveView } from './model.ts';
import { findMove, startMove } from './control.ts';
import { clusterCounts } from './rule.ts';

// Placement over several MongoDB clusters and moves between them (docs/placement.md): platform
// operations like the other tenant routes. A move is a workflow; its step and progress are a row
// in the platform database, so the reads answer without a worker.

const TenantId = z.object({ id: z.string().min(1) });
export const ClusterLabel = z.string().regex(CLUSTER_LABEL, 'must be a cluster label');

export const listClustersOp = defineOperation({
  id: 'clusters.list',
  surface: 'manage',
  method: 'GET',
  path: '/clusters',
  summary: 'The MongoDB clusters workspaces are placed on, with how many each holds',
  description: '`default` is MONGODB_URI; the others are MONGODB_CLUSTERS. URIs are never shown. A workspace counts until its database is dropped.',
  requires: 'platform:read',
  input: z.object({}),
  output: z.object({ clusters: z.array(z.object({ label: z.string(), region: z.string(), workspaces: z.number().int() })) }),
  async handler(ctx) {
    const counts = await clusterCounts(ctx.services);
    return { clusters: ctx.services.placement.pool.clusters.map(({ label, region }) => ({ label, region, workspaces: counts.get(label) ?? 0 })) };
  },
});

export const moveTenantOp = defineOperation({
  id: 'tenants.move',
  surface: 'manage',
  method: 'POST',
  path: '/tenants/:id/move',
  summary: "Move a workspace's database to another cluster",
  description:
    'Answers 202 with the move `running`; poll GET …/moves/{moveId}. The data is copied while writes run, then writes answer 423 for the switch (a few seconds), ' +
    'then go to the new cluster; reads are served throughout (docs/placement.md). Unknown cluster: 400. Already there, not active or suspended, held by a backup, or moving: 409.',
  requires: 'platform:manage',
  errors: [409, 503],
  status: 202,
  input: TenantId.extend({ cluster: ClusterLabel }),
  output: z.object({ move: MoveView }),
  async handler(ctx, { id, cluster }) {
    return { move: moveView(await startMove(ctx.services, id, cluster)) };
  },
});

export const getMoveOp = defineOperation({
  id: 'tenants.moves.get',
  surface: 'manage',
  method: 'GET',
  path: '/tenants/:id/moves/:moveId',
  summary: 'One move: state, step, progress and how long writes were refused',
  requires: 'platform:read',
  input: TenantId.extend({ moveId: z.string().min(1) }),
  output: z.object({ move: MoveView }),
  async handler(ctx, { id, moveId }) {
    return { move: moveView(await findMove(ctx.services, id, moveId)) };
  },
});

export const placementOperations = [listClustersOp, moveTenantOp, getMoveOp];
