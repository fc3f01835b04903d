import type { Services } from '../../core/context.ts';
import { DEFAULT_CLUSTER } from '../../core/clusters.ts';
import { BadRequestError } from '../../core/errors.ts';
import { WORKSPACE_STATUSES } from '../../core/tenants.ts';
import { platformCollections } from '../../tenancy/platform-db.ts';

/** Statuses that hold a database on their cluster (a deleted workspace's kept data counts: it may come back). */
const COUNTED = { status: { $in: [...WORKSPACE_STATUSES] }, databaseDropped: { $ne: true } };

/** Workspaces per cluster, every configured cluster listed (0 when empty). */
export async function clusterCounts(services: Services): Promise<Map<string, number>> {
  const { workspaces } = platformCollections(services);
  const counts = new Map<string, number>();
  let elsewhere = 0;
  for (const { label } of services.placement.pool.clusters) {
    if (label === DEFAULT_CLUSTER) continue;
    const count = await workspaces.countDocuments({ cluster: label, ...COUNTED });
    counts.set(label, count);
    elsewhere += count;
  }
  const all = await workspaces.countDocuments(COUNTED);
  return new Map([[DEFAULT_CLUSTER, all - elsewhere], ...counts]);
}

/**
 * The placement rule (docs/placement.md): the cluster asked for; else, with a region asked for,
 * the cluster of that region holding the fewest workspaces; else the cluster holding the fewest
 * (a tie goes to the first listed: `default`, then MONGODB_CLUSTERS' order). An unknown cluster or
 * region is a 400. With one cluster, no count is read.
 */
export async function chooseCluster(services: Services, asked: { cluster?: string; region?: string }): Promise<string> {
  const { pool } = services.placement;
  if (asked.cluster !== undefined) {
    if (!pool.has(asked.cluster)) throw new BadRequestError(`Unknown cluster: ${asked.cluster}`);
    return asked.cluster;
  }
  const candidates = pool.clusters.filter((c) => asked.region === undefined || c.region === asked.region);
  if (candidates.length === 0) throw new BadRequestError(`No cluster in region: ${asked.region}`);
  if (candidates.length === 1) return candidates[0]!.label;
  const counts = await clusterCounts(services);
  let best = candidates[0]!;
  for (const candidate of candidates) if ((counts.get(candidate.label) ?? 0) < (counts.get(best.label) ?? 0)) best = candidate;
  return best.label;
}
