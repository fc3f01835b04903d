import { createHash } from 'node:crypto';
import type { Feature } from '../core/feature.ts';
import type { IndexSpec } from './indexes.ts';

/** The indexes provisioning creates (and upgrades bring up to date): every feature's, except those created on first use. */
export const workspaceIndexSpecs = (features: readonly Feature[]): IndexSpec[] =>
  features.flatMap((feature) => feature.indexes ?? []).filter((spec) => !spec.onFirstUse);

/**
 * The version of the workspace indexes a release needs: a digest of every feature's index specs.
 * A workspace row records the version its database has; only a release that changes the specs
 * makes the workspace actors (not the gateways' start) bring databases up to date.
 */
export function workspaceIndexVersion(features: readonly Feature[]): string {
  const specs = workspaceIndexSpecs(features).map((spec) => [spec.collection, spec.keys, spec.options ?? {}]);
  return createHash('sha256').update(JSON.stringify(specs)).digest('hex').slice(0, 16);
}
