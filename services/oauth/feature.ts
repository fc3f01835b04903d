import type { Feature } from '../core/feature.ts';
import { oauthIndexes } from './model.ts';

/** OAuth has no registry operations (its endpoints are protocol routes in services/http/oauth.ts). */
export const oauthFeature: Feature = { name: 'oauth', operations: [], indexes: oauthIndexes };
