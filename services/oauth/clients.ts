import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { TooManyRequestsError } from '../core/errors.ts';
import { oauthCollections, type OAuthClientDoc } from './model.ts';

/**
 * Registration is open (RFC 7591: an agent registers itself before anyone signs in), so what it
 * can store is bounded: at most this many clients per site (a registration beyond it is refused
 * and stores nothing), and a client that never got a grant is removed once `UNUSED_CLIENT_TTL_MS`
 * has passed, so abandoned or junk registrations free their place. The per-IP rate of
 * registrations is the route's (http/oauth.ts).
 */
export const MAX_CLIENTS_PER_SITE = 1_000;
export const UNUSED_CLIENT_TTL_MS = 24 * 60 * 60_000;
/** Unused clients one registration removes at most (the cap bounds them anyway). */
const PURGE_BATCH = 1_000;

/**
 * Stores a dynamically registered client (RFC 7591) of one site, after removing the site's expired
 * unused clients. Inserted, then counted: a registration that finds the site over its cap removes
 * itself again, so concurrent ones never leave more than the cap (they may both be refused). A full
 * site answers 429: unused clients free their place when they expire, so "later" is true; the wait
 * is until the oldest of them expires (an hour when none will).
 */
export async function registerClient(db: Db, siteId: string, name: string, redirectUris: string[], now: Date): Promise<OAuthClientDoc> {
  const { clients } = oauthCollections(db);
  await purgeUnusedClients(db, siteId, now);
  const client: OAuthClientDoc = { _id: newId(), siteId, name, redirectUris, createdAt: now, grantedAt: null };
  await clients.insertOne(client);
  if ((await clients.countDocuments({ siteId }, { limit: MAX_CLIENTS_PER_SITE + 1 })) > MAX_CLIENTS_PER_SITE) {
    await clients.deleteOne({ _id: client._id, siteId });
    const oldest = await clients
      .find({ siteId, grantedAt: null }, { projection: { createdAt: 1 } })
      .sort({ createdAt: 1 })
      .limit(1)
      .next();
    const waitMs = oldest ? oldest.createdAt.getTime() + UNUSED_CLIENT_TTL_MS - now.getTime() : 60 * 60_000;
    throw new TooManyRequestsError(waitMs / 1000);
  }
  return client;
}

/**
 * Removes the site's clients older than `UNUSED_CLIENT_TTL_MS` that never got a grant (a bounded
 * pass). A client stored before `grantedAt` was recorded is kept when a grant names it (and then
 * marked), so agents already authorized are never dropped.
 */
export async function purgeUnusedClients(db: Db, siteId: string, now: Date): Promise<number> {
  const { clients, grants } = oauthCollections(db);
  const before = new Date(now.getTime() - UNUSED_CLIENT_TTL_MS);
  const candidates = await clients
    .find({ siteId, grantedAt: null, createdAt: { $lt: before } }, { projection: { _id: 1 } })
    .limit(PURGE_BATCH)
    .toArray();
  if (candidates.length === 0) return 0;
  const ids = candidates.map((c) => c._id);
  const used = new Set((await grants.find({ siteId, clientId: { $in: ids } }, { projection: { clientId: 1 } }).toArray()).map((g) => g.clientId));
  if (used.size > 0) await clients.updateMany({ siteId, _id: { $in: [...used] } }, { $set: { grantedAt: now } });
  const unused = ids.filter((id) => !used.has(id));
  if (unused.length === 0) return 0;
  return (await clients.deleteMany({ siteId, _id: { $in: unused }, grantedAt: null })).deletedCount;
}

/** Its first grant makes a client permanent (no longer purged as unused). */
export async function markClientGranted(db: Db, siteId: string, clientId: string, now: Date): Promise<void> {
  await oauthCollections(db).clients.updateOne({ _id: clientId, siteId, grantedAt: null }, { $set: { grantedAt: now } });
}

/** A client of this site only: an id registered at another site's authorization server is unknown here. */
export async function findClient(db: Db, siteId: string, clientId: string): Promise<OAuthClientDoc | null> {
  return oauthCollections(db).clients.findOne({ _id: clientId, siteId });
}
