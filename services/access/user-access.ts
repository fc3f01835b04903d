import type { Db } from 'mongodb';
import type { Capability } from '../core/capabilities.ts';
import { accessCollections, type UserDoc } from './model.ts';
import { BUILT_IN_ROLES, effectiveCapabilities } from './roles.ts';

/** A user's access as it stands now: role capabilities plus grants, minus denials. */
export interface UserAccess {
  user: UserDoc;
  capabilities: Set<Capability>;
}

export async function roleCapabilities(db: Db, siteId: string, roleId: string): Promise<readonly Capability[]> {
  const builtIn = BUILT_IN_ROLES[roleId];
  if (builtIn) return builtIn.capabilities;
  const role = await accessCollections(db).roles.findOne({ _id: roleId, siteId }, { projection: { capabilities: 1 } });
  // A user whose custom role was removed keeps nothing from it: deny by default.
  return role?.capabilities ?? [];
}

export async function accessOfUser(db: Db, user: UserDoc): Promise<UserAccess> {
  return { user, capabilities: effectiveCapabilities(await roleCapabilities(db, user.siteId, user.role), user.policy, user.platformOperator) };
}

/** A live account's access; null when it is gone or disabled (every credential of it stops: session, key, OAuth). */
export async function loadUserAccess(db: Db, siteId: string, userId: string): Promise<UserAccess | null> {
  const user = await accessCollections(db).users.findOne({ _id: userId, siteId });
  return user && !user.disabled ? accessOfUser(db, user) : null;
}
