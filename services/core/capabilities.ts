import { z } from 'zod';

/** The contract's capability identifiers (section 5): what a workspace role can hold. */
export const CAPABILITIES = [
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
  'settings:manage',
  'users:read',
  'users:manage',
  'site:admin',
  'analytics:read',
  'email-templates:manage',
  'plugins:read',
  'plugins:activate',
  'themes:read',
  'themes:activate',
] as const;

/**
 * Platform rights (issue 13). No role or policy can hold them: a user has both exactly while its
 * `platformOperator` flag is set (services/access/roles.ts), so only an operator can put them on
 * a key (creation ceiling), and revoking the flag takes them from every key and token at once.
 */
export const PLATFORM_CAPABILITIES = ['platform:read', 'platform:manage'] as const;
export type PlatformCapability = (typeof PLATFORM_CAPABILITIES)[number];

export const ALL_CAPABILITIES = [...CAPABILITIES, ...PLATFORM_CAPABILITIES] as const;

export const CapabilitySchema = z.enum(ALL_CAPABILITIES);
/** What roles and per-user policies may name: platform rights come from the operator flag only. */
export const WorkspaceCapabilitySchema = z.enum(CAPABILITIES);
export type WorkspaceCapability = (typeof CAPABILITIES)[number];
export type Capability = z.infer<typeof CapabilitySchema>;

/**
 * What an operation requires of its caller:
 * - a capability (or several, all required);
 * - `authenticated`: any valid principal (health, events);
 * - `public`: anonymous is fine (Public Content API, openapi.json).
 */
export type Requirement = Capability | Capability[] | 'authenticated' | 'public';

export function requiredCapabilities(requirement: Requirement): Capability[] {
  if (Array.isArray(requirement)) return requirement;
  if (requirement === 'authenticated' || requirement === 'public') return [];
  return [requirement];
}

export const isPlatformCapability = (capability: Capability): capability is PlatformCapability =>
  (PLATFORM_CAPABILITIES as readonly string[]).includes(capability);
