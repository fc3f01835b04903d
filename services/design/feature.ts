import type { Feature } from '../core/feature.ts';
import { publicDesignOperations } from './public-ops.ts';
import { customizerOperations } from './customizer-ops.ts';
import { errorPageOperations, patternOperations, reusableBlockOperations } from './libraries.ts';
import { permalinkOperations } from './permalinks-ops.ts';
import { DESIGN_COLLECTION } from './store.ts';
import { templatePartOperations } from './template-parts-ops.ts';
import { templateOperations } from './templates-ops.ts';
import { widgetAreaOperations } from './widget-area-ops.ts';
import { deleteLayoutOp, getLayoutOp, putLayoutOp } from './widget-layout-ops.ts';
import { widgetOperations } from './widget-ops.ts';
import { WIDGET_COLLECTIONS } from './widgets.ts';

/** Site design: template parts and headers, templates, customizer, widgets, libraries, permalinks. */
export const designFeature: Feature = {
  name: 'design',
  operations: [
    ...publicDesignOperations,
    ...templatePartOperations,
    ...templateOperations,
    ...customizerOperations,
    ...widgetAreaOperations,
    getLayoutOp,
    putLayoutOp,
    deleteLayoutOp,
    ...widgetOperations,
    ...patternOperations,
    ...reusableBlockOperations,
    ...errorPageOperations,
    ...permalinkOperations,
  ],
  // Every design write changes what the design reads and the site's URLs answer (core/public-generation.ts).
  publicCollections: [DESIGN_COLLECTION, WIDGET_COLLECTIONS.areas, WIDGET_COLLECTIONS.widgets],
  // Design documents, widget areas and widgets are `site_config` kinds (core/site-config.ts): unique
  // by kind and key, by key, and (placed one by one by people, read per site as a few rows) by `_id`.
};
