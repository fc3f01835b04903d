import { z } from 'zod';

/** The contract's capability identifiers (section 5). */
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

export const CapabilitySchema = z.enum(CAPABILITIES);
export type Capability = z.infer<typeof CapabilitySchema>;

/**
 * What an operation requires of its caller:
 * - a capability (or several, all required);
 * - `authenticated`: any valid principal (health, events);
 * - `platform`: the principal's user is a platform operator;
 * - `public`: anonymous is fine (Public Content API, openapi.json).
 */
export type Requirement = Capability | Capability[] | 'authenticated' | 'platform' | 'public';

export function requiredCapabilities(requirement: Requirement): Capability[] {
  if (Array.isArray(requirement)) return requirement;
  if (requirement === 'authenticated' || requirement === 'platform' || requirement === 'public') return [];
  return [requirement];
}
