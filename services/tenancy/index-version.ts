import { createHash } from 'node:crypto';
import type { Feature } from '../core/feature.ts';
import type { IndexSpec } from './indexes.ts';
import { SITE_CONFIG_INDEXES } from '../core/site-config.ts';

/** Every workspace index: `site_config`'s (core/site-config.ts, shared by the configuration kinds of several features), then each feature's. */
export const workspaceIndexSpecs = (features: readonly Feature[]): IndexSpec[] => [
  ...SITE_CONFIG_INDEXES,
  ...features.flatMap((feature) => feature.indexes ?? []),
];

/**
 * The layout of a workspace database's collections, raised by a release that moves documents from
 * one collection to another (the upgrade step runs the moves, `upgradeWorkspaceIndexes`):
 * 2: the small state documents in one `site_state` (core/site-state.ts);
 * 3: the hand-made configuration in one `site_config` (core/site-config.ts).
 */
const LAYOUT = 3;

/**
 * The version of the workspace indexes a release needs: a digest of the layout and every feature's index specs.
 * A workspace row records the version its database has; only a release that changes the specs
 * makes the workspace actors (not the gateways' start) bring databases up to date.
 */
export function workspaceIndexVersion(features: readonly Feature[]): string {
  const specs = workspaceIndexSpecs(features).map((spec) => [spec.collection, spec.keys, spec.options ?? {}]);
  return createHash('sha256')
    .update(JSON.stringify([LAYOUT, specs]))
    .digest('hex')
    .slice(0, 16);
}
