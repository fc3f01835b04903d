import type { Db } from 'mongodb';
import type { Capability } from '../core/capabilities.ts';
import { accessCollections } from '../access/model.ts';
import { accessOfUser } from '../access/user-access.ts';
import { grantIdOfKeyId, oauthCollections, oauthKeyId } from '../oauth/model.ts';
import type { Services } from '../core/context.ts';
import { eventReadRights, PLUGIN_EVENT_DEFAULT_REQUIRES } from './catalog.ts';
import type { EndpointDoc } from './model.ts';

/** Who made an endpoint: the key (an API key's id, or `oauth:<grantId>`) or, without one, the user. */
export type Creator = Pick<EndpointDoc, 'ownerKeyId' | 'createdBy'>;

/** What an endpoint's creator may read now. */
export interface CreatorRights {
  /** `all`: a row no principal made (written by the system, or before creators were recorded). */
  capabilities: ReadonlySet<Capability> | 'all';
  /** A key's expiry (epoch ms): kept with the rights, so rights held in memory end on time. */
  until: number | null;
  /** Made through an OAuth grant: its revocation is not announced, so the publisher reads it per round. */
  grantId: string | null;
}

export const creatorOf = (e: Creator): string => (e.ownerKeyId ? `key:${e.ownerKeyId}` : e.createdBy ? `user:${e.createdBy}` : 'system');

/**
 * The live rights of the creators of these endpoints, as the gate would compute them for a request
 * now: a key's capabilities ∩ its owner's (nothing once revoked, expired, deleted or ownerless);
 * an OAuth grant's consented scope ∩ its user's; a session user's role and policy (nothing once
 * deleted). A few statements for any number of endpoints (keys, grants, users; custom roles).
 */
export async function loadCreatorRights(db: Db, siteId: string, creators: readonly Creator[]): Promise<Map<string, CreatorRights>> {
  const keyIds = new Set<string>();
  const grantIds = new Set<string>();
  const userIds = new Set<string>();
  for (const c of creators) {
    if (c.ownerKeyId) {
      const grantId = grantIdOfKeyId(c.ownerKeyId);
      if (grantId) grantIds.add(grantId);
      else keyIds.add(c.ownerKeyId);
    } else if (c.createdBy) userIds.add(c.createdBy);
  }
  const { apiKeys, users } = accessCollections(db);
  const [keys, grants] = await Promise.all([
    keyIds.size ? apiKeys.find({ siteId, _id: { $in: [...keyIds] } }, { projection: { capabilities: 1, ownerId: 1, status: 1, expiresAt: 1 } }).toArray() : [],
    grantIds.size
      ? oauthCollections(db)
          .grants.find({ siteId, _id: { $in: [...grantIds] } }, { projection: { scope: 1, userId: 1, revokedAt: 1 } })
          .toArray()
      : [],
  ]);
  for (const key of keys) userIds.add(key.ownerId);
  for (const grant of grants) userIds.add(grant.userId);
  const userRows = userIds.size ? await users.find({ siteId, _id: { $in: [...userIds] } }).toArray() : [];
  // Holding nothing; one set shared by every such creator of this load.
  const none: ReadonlySet<Capability> = new Set();
  const holds = new Map(await Promise.all(userRows.map(async (user) => [user._id, (await accessOfUser(db, user)).capabilities] as const)));
  const within = (asked: readonly Capability[], userId: string) => {
    const held = holds.get(userId);
    return held ? new Set(asked.filter((capability) => held.has(capability))) : none;
  };

  const rights = new Map<string, CreatorRights>();
  for (const key of keys) {
    const capabilities = key.status === 'active' ? within(key.capabilities, key.ownerId) : none;
    rights.set(creatorOf({ ownerKeyId: key._id, createdBy: null }), { capabilities, until: key.expiresAt?.getTime() ?? null, grantId: null });
  }
  for (const grant of grants) {
    const capabilities = grant.revokedAt ? none : within(grant.scope, grant.userId);
    rights.set(creatorOf({ ownerKeyId: oauthKeyId(grant._id), createdBy: null }), { capabilities, until: null, grantId: grant._id });
  }
  for (const c of creators) {
    const who = creatorOf(c);
    if (rights.has(who)) continue;
    if (who === 'system') rights.set(who, { capabilities: 'all', until: null, grantId: null });
    else if (!c.ownerKeyId && c.createdBy) rights.set(who, { capabilities: holds.get(c.createdBy) ?? none, until: null, grantId: null });
    // A key or grant that no longer exists holds nothing.
    else rights.set(who, { capabilities: none, until: null, grantId: null });
  }
  return rights;
}

/** May an endpoint whose creator holds `rights` receive an event that takes `capability` to read, at `now`? */
export function mayRead(rights: CreatorRights | undefined, capability: Capability, now: number, liveGrants?: ReadonlySet<string>): boolean {
  if (!rights) return false;
  if (rights.capabilities === 'all') return true;
  if (rights.until !== null && rights.until <= now) return false;
  if (rights.grantId && liveGrants && !liveGrants.has(rights.grantId)) return false;
  return rights.capabilities.has(capability);
}

/** Of these grants, those not revoked now (one read by `_id`). */
export async function liveGrantsAmong(db: Db, siteId: string, grantIds: readonly string[]): Promise<Set<string>> {
  if (grantIds.length === 0) return new Set();
  const live = await oauthCollections(db)
    .grants.find({ siteId, _id: { $in: [...grantIds] }, revokedAt: null }, { projection: { _id: 1 } })
    .toArray();
  return new Set(live.map((grant) => grant._id));
}

/**
 * For a delivery pass: why the endpoint's creator may not receive an event now (the missing
 * capability, as the history's error), or null. Read once per pass: rows stored before the creator
 * lost the right (retries, a backlog behind a pause) are not sent after it.
 */
export async function creatorWithholds(services: Services, db: Db, siteId: string, endpoint: Creator): Promise<(event: string) => string | null> {
  const [reads, creators] = await Promise.all([eventReadRights(services, siteId), loadCreatorRights(db, siteId, [endpoint])]);
  const rights = creators.get(creatorOf(endpoint));
  return (event) => {
    const capability = reads.get(event) ?? PLUGIN_EVENT_DEFAULT_REQUIRES;
    return mayRead(rights, capability, services.clock.now().getTime()) ? null : `withheld: the endpoint's creator no longer holds ${capability}`;
  };
}
