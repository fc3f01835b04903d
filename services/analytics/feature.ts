import type { Feature } from '../core/feature.ts';
import { analyticsSummaryOp } from './analytics-ops.ts';

/** Read-only: the summary is computed from the other features' collections. */
export const analyticsFeature: Feature = { name: 'analytics', operations: [analyticsSummaryOp] };
