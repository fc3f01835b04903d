import type { World } from '../support/world.ts';
import { defaultSiteContext } from '../support/access.ts';
import { createUser } from '../../services/access/users.ts';
import type { Policy } from '../../services/access/roles.ts';

/** A user of the default site, created through the service layer; returns its id and password. */
export async function addUser(world: World, email: string, role: string, policy: Policy = {}) {
  const ctx = await defaultSiteContext(world);
  const password = `pw-${email}-long-enough`;
  const user = await createUser(ctx, { email, password, role, policy });
  return { id: user._id, email, password };
}

export const bearer = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });

/** Waits until the current one-minute rate window has at least `needSeconds` left. */
export async function freshWindow(needSeconds = 15): Promise<void> {
  const left = 60 - ((Date.now() / 1000) % 60);
  if (left < needSeconds) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
}
