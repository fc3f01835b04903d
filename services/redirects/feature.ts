import type { Feature } from '../core/feature.ts';
import { createRedirectOp, deleteRedirectOp, getRedirectOp, listRedirectsOp, replaceRedirectOp } from './redirects-ops.ts';
import { REDIRECTS_COLLECTION } from './redirects.ts';
import { publicResolveRedirectOp } from './public-ops.ts';

export const redirectsFeature: Feature = {
  name: 'redirects',
  publicCollections: [REDIRECTS_COLLECTION],
  operations: [listRedirectsOp, getRedirectOp, createRedirectOp, replaceRedirectOp, deleteRedirectOp, publicResolveRedirectOp],
  indexes: [{ collection: REDIRECTS_COLLECTION, keys: { siteId: 1, from: 1 }, options: { unique: true } }],
};
