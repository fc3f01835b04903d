import type { Feature } from '../core/feature.ts';
import { getCookiesOp, putCookiesOp } from './cookies-ops.ts';

/** One registry document per site (`_id` = siteId), so it needs no extra index. */
export const cookiesFeature: Feature = { name: 'cookies', operations: [getCookiesOp, putCookiesOp] };
