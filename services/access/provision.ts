import type { OperationContext } from '../core/context.ts';
import type { ProvisionInput } from '../core/feature.ts';
import { ensureSiteSettings } from './site-settings-store.ts';
import { createUser, findUserByEmail } from './users.ts';

/** A new workspace's first site gets its administrator (idempotent: a retried provision reuses it). */
export async function provisionAdministrator(ctx: OperationContext, input: ProvisionInput): Promise<void> {
  await ensureSiteSettings(ctx.db, ctx.site._id, ctx.services.clock.now());
  if (await findUserByEmail(ctx, input.admin.email)) return;
  const { password, passwordHash } = input.admin;
  const secret = passwordHash ? { passwordHash } : { password: password ?? '' };
  if (!passwordHash && !password) throw new Error('an administrator needs a password or its hash');
  await createUser(ctx, {
    email: input.admin.email,
    name: input.admin.name,
    ...secret,
    role: 'administrator',
    policy: {},
    platformOperator: input.admin.platformOperator ?? false,
  });
}
