import { CAPABILITIES, type Capability } from '../core/capabilities.ts';

/**
 * Built-in roles (documented in docs/access.md). Ids are stable strings so a user's `role` can name
 * either a built-in role or a custom role id (custom ids come from `newId()` and never clash).
 */
export const BUILT_IN_ROLES: Readonly<Record<string, { name: string; capabilities: readonly Capability[] }>> = {
  administrator: { name: 'Administrator', capabilities: CAPABILITIES },
  editor: {
    name: 'Editor',
    capabilities: [
      'content:read', 'content:create', 'content:update', 'content:delete', 'content:publish',
      'content:revisions:read', 'media:read', 'media:upload', 'media:delete', 'comments:moderate',
      'settings:read', 'users:read', 'analytics:read', 'plugins:read', 'themes:read',
    ],
  },
  author: {
    name: 'Author',
    capabilities: [
      'content:read', 'content:create', 'content:update', 'content:publish', 'content:revisions:read',
      'media:read', 'media:upload',
    ],
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
  grant?: Capability[];
  deny?: Capability[];
}

export function effectiveCapabilities(roleCapabilities: readonly Capability[], policy: Policy = {}): Set<Capability> {
  const result = new Set<Capability>([...roleCapabilities, ...(policy.grant ?? [])]);
  for (const capability of policy.deny ?? []) result.delete(capability);
  return result;
}
