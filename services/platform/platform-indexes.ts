import type { IndexSpec } from '../core/feature.ts';
import { PLATFORM_COLLECTIONS } from '../core/tenants.ts';
import { platformAuditIndexes } from '../audit/feature.ts';

/** The platform database's indexes, created at every start (idempotent): sites by workspace, the operators' audit rows. */
export const platformIndexSpecs: readonly IndexSpec[] = [{ collection: PLATFORM_COLLECTIONS.sites, keys: { workspaceId: 1 } }, ...platformAuditIndexes];
