import type { Feature } from '../core/feature.ts';
import { createRedirectOp, deleteRedirectOp, getRedirectOp, listRedirectsOp, replaceRedirectOp } from './redirects-ops.ts';
import { REDIRECTS_COLLECTION } from './redirects.ts';
import { publicResolveRedirectOp } from './public-ops.ts';

export const redirectsFeature: Feature = {
  name: 'redirects',
  publicCollections: [REDIRECTS_COLLECTION],
  operations: [listRedirectsOp, getRedirectOp, createRedirectOp, replaceRedirectOp, deleteRedirectOp, publicResolveRedirectOp],
  // Redirects are a `site_config` kind, unique by `from` there (core/site-config.ts): the public lookup is its key.
};
