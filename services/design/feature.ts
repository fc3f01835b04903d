import type { Feature } from '../core/feature.ts';
import type { Operation } from '../core/operation.ts';
import { bumpContentGeneration } from '../public-read/state.ts';
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

/**
 * Every design write changes what the Public API's design reads and the site's URLs answer: the
 * site's public generation moves once, after the write succeeded (one place for the whole feature;
 * the write path of issue 22 item 1 may take this over).
 */
const announced = (operations: Operation[]): Operation[] =>
  operations.map((operation) =>
    operation.method === 'GET'
      ? operation
      : {
          ...operation,
          async handler(ctx, input) {
            const result = await operation.handler(ctx, input);
            await bumpContentGeneration(ctx);
            return result;
          },
        },
  );

/** Site design: template parts and headers, templates, customizer, widgets, libraries, permalinks. */
export const designFeature: Feature = {
  name: 'design',
  operations: [
    ...publicDesignOperations,
    ...announced([
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
    ]),
  ],
  indexes: [
    { collection: DESIGN_COLLECTION, keys: { siteId: 1, kind: 1, key: 1 }, options: { unique: true } },
    { collection: WIDGET_COLLECTIONS.areas, keys: { siteId: 1, key: 1 }, options: { unique: true } },
    { collection: WIDGET_COLLECTIONS.widgets, keys: { siteId: 1, area: 1, position: 1 } },
  ],
};
