import type { Services } from '../core/context.ts';
import type { EndpointRef } from '../../workflows/contracts/endpoint-actor.ts';
import { eventCollections, type DeliveryDoc } from './model.ts';

/** The filter of the rows this endpoint's actor owns and has not finished. */
export const ownedPending = (ref: EndpointRef) => ({ siteId: ref.siteId, endpointId: ref.endpointId, status: 'pending' as const, via: 'endpoint' as const });

/**
 * The ids of the rows a pass still has to send, oldest first, and the earliest retry not due yet.
 * Filled by one scan of the endpoint's pending rows (ids and times only, no bodies) and by the inbox.
 */
export class DueQueue {
  private ids: string[] = [];
  private seen = new Set<string>();
  nextDueAt: number | null = null;

  get size() {
    return this.ids.length;
  }

  async scan(services: Services, ref: EndpointRef) {
    const now = services.clock.now().getTime();
    const rows = await eventCollections(services.workspaceDb({ dbName: ref.dbName }))
      .deliveries.find(ownedPending(ref), { projection: { _id: 1, nextAttemptAt: 1 } })
      .toArray();
    this.nextDueAt = null;
    const due: string[] = [];
    for (const row of rows) {
      const at = row.nextAttemptAt?.getTime() ?? 0;
      if (at <= now) due.push(row._id);
      else this.retryAt([at]);
    }
    // Ids are time-ordered (core/ids.ts): sorting them sends the oldest first.
    this.ids = [...new Set([...this.ids, ...due])].sort();
    for (const id of due) this.seen.add(id);
  }

  /** Ids from the inbox: newer than everything queued; loaded (and checked) when their batch comes. */
  add(ids: string[]) {
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      this.ids.push(id);
    }
  }

  /**
   * The next ids to load. They stay `seen` until `settled`: the inbox may name a row the scan
   * found too, and queueing it again while its batch (or the read-ahead) holds it sends it twice.
   */
  take(n: number) {
    return this.ids.splice(0, n);
  }

  /** Not sent after all (the batch stopped early): first in line again. */
  requeue(ids: string[]) {
    for (const id of ids) this.seen.add(id);
    this.ids.unshift(...ids);
  }

  /** Their outcome is written: a row sent in this pass may come back (a retry, found by a later scan). */
  settled(ids: string[]) {
    for (const id of ids) this.seen.delete(id);
  }

  retryAt(times: number[]) {
    for (const at of times) if (this.nextDueAt === null || at < this.nextDueAt) this.nextDueAt = at;
  }
}

/** The rows with these ids that this actor still owes and that are due now (by `_id`: no scan). */
export async function loadDue(services: Services, ref: EndpointRef, ids: string[]): Promise<DeliveryDoc[]> {
  if (ids.length === 0) return [];
  const now = services.clock.now().getTime();
  const rows = await eventCollections(services.workspaceDb({ dbName: ref.dbName }))
    .deliveries.find({ _id: { $in: ids } })
    .toArray();
  return rows
    .filter((row) => row.siteId === ref.siteId && row.endpointId === ref.endpointId && row.status === 'pending' && row.via === 'endpoint')
    .filter((row) => (row.nextAttemptAt?.getTime() ?? 0) <= now)
    .sort((a, b) => (a._id < b._id ? -1 : 1));
}

/** Empties the endpoint's inbox (one atomic statement) and returns the ids it held. */
export async function takeInbox(services: Services, ref: EndpointRef): Promise<string[]> {
  const { endpoints } = eventCollections(services.workspaceDb({ dbName: ref.dbName }));
  const taken = await endpoints.findOneAndUpdate({ _id: ref.endpointId }, { $set: { inbox: [] } }, { projection: { inbox: 1 } });
  return taken?.inbox ?? [];
}
