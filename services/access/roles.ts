import { CAPABILITIES, isPlatformCapability, PLATFORM_CAPABILITIES, type Capability, type WorkspaceCapability } from '../core/capabilities.ts';

/**
 * Built-in roles (documented in docs/access.md). Ids are stable strings so a user's `role` can name
 * either a built-in role or a custom role id (custom ids come from `newId()` and never clash).
 */
export const BUILT_IN_ROLES: Readonly<Record<string, { name: string; capabilities: readonly Capability[] }>> = {
  administrator: { name: 'Administrator', capabilities: CAPABILITIES },
  editor: {
    name: 'Editor',
    capabilities: [
      'content:read',
      'content:create',
      'content:update',
      'content:delete',
      'content:publish',
      'content:revisions:read',
      'media:read',
      'media:upload',
      'media:delete',
      'comments:moderate',
      'settings:read',
      'users:read',
      'analytics:read',
      'plugins:read',
      'themes:read',
    ],
  },
  author: {
    name: 'Author',
    capabilities: ['content:read', 'content:create', 'content:update', 'content:publish', 'content:revisions:read', 'media:read', 'media:upload'],
  },
  contributor: {
    name: 'Contributor',
    capabilities: ['content:read', 'content:create', 'content:update', 'content:revisions:read', 'media:read'],
  },
  viewer: { name: 'Viewer', capabilities: ['content:read', 'media:read'] },
};

export const isBuiltInRole = (id: string): boolean => Object.hasOwn(BUILT_IN_ROLES, id);

/** A user's per-user policy: capabilities added to, or taken from, what the role gives. Deny wins. */
export interface Policy {
  grant?: WorkspaceCapability[];
  deny?: WorkspaceCapability[];
}

/**
 * Role plus grants minus denials; platform capabilities come only from the operator flag (a role
 * or grant naming them is ignored), so a workspace administrator can never hand them out.
 */
export function effectiveCapabilities(roleCapabilities: readonly Capability[], policy: Policy = {}, platformOperator = false): Set<Capability> {
  const result = new Set<Capability>([...roleCapabilities, ...(policy.grant ?? [])].filter((c) => !isPlatformCapability(c)));
  for (const capability of policy.deny ?? []) result.delete(capability);
  if (platformOperator) for (const capability of PLATFORM_CAPABILITIES) result.add(capability);
  return result;
}
