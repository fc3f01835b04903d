import { startPeriodicPass, type PeriodicPass } from '../core/periodic-pass.ts';
import type { Services } from '../core/context.ts';
import { platformCollections } from '../tenancy/platform-db.ts';
import { mailCollection } from './model.ts';
import { startMailWorkflow } from './outbox.ts';

/** A queued mail younger than this is left to the request that queued it (its start may be in flight). */
const GRACE_MS = 60_000;
/** Mails started per workspace and pass, so one pass stays short. */
const PER_PASS = 100;

/**
 * The outbox's safety net: a mail whose workflow could not be started when it was queued (Temporal
 * unreachable, the gateway gone) stays `queued`; the worker starts its workflow here. A mail whose
 * workflow runs already is found by its workflow id and left alone. Returns how many it started.
 */
export async function drainQueuedMails(services: Services): Promise<number> {
  const now = services.clock.now();
  let started = 0;
  const { workspaces, sites } = platformCollections(services);
  for await (const workspace of workspaces.find({ status: 'active' })) {
    const mails = mailCollection(services.workspaceDb(workspace));
    let budget = PER_PASS;
    // Site by site, through the list's `{ siteId, state, _id }` (the queued are few: a mail leaves
    // that state when its workflow starts), not an index of its own.
    for await (const site of sites.find({ workspaceId: workspace._id }, { projection: { _id: 1 } })) {
      if (budget <= 0) break;
      const stale = await mails
        .find({ siteId: site._id, state: 'queued', updatedAt: { $lt: new Date(now.getTime() - GRACE_MS) } }, { projection: { _id: 1, siteId: 1 } })
        .limit(budget)
        .toArray();
      for (const mail of stale) {
        if (!(await startMailWorkflow({ services, workspace }, mail))) return started;
        await mails.updateOne({ _id: mail._id, state: 'queued' }, { $set: { updatedAt: now } });
        started++;
        budget--;
      }
    }
  }
  return started;
}

/** Runs the drain in the worker: at boot, then every `intervalMs`. Stops with the MongoDB client. */
export function startMailDrain(services: Services, intervalMs = 60_000): PeriodicPass {
  const pass = startPeriodicPass('mail drain', intervalMs, services.log, () => drainQueuedMails(services));
  services.mongo.once('topologyClosed', () => void pass.stop());
  return pass;
}
