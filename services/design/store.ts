import type { OperationContext } from '../core/context.ts';
import { DESIGN_COLLECTION, designDocId } from '../core/design-documents.ts';

export { DESIGN_COLLECTION };

/**
 * Site design settings are small documents (a template, a template part, a pattern, the
 * customizer values, the permalink structure): one collection, keyed by site, kind and key. The
 * `_id` is that key, so an upsert of the same item twice is a no-op rather than a duplicate.
 */
export interface DesignDoc<V = Record<string, unknown>> {
  _id: string;
  siteId: string;
  kind: DesignKind;
  key: string;
  value: V;
  updatedAt: Date;
}

export type DesignKind =
  'template-part' | 'header-settings' | 'template' | 'customizer' | 'widget-layout' | 'pattern' | 'reusable-block' | 'error-page' | 'permalinks';

export const designCollection = <V>(ctx: Pick<OperationContext, 'db'>) => ctx.db.collection<DesignDoc<V>>(DESIGN_COLLECTION);

export const designId = (ctx: OperationContext, kind: DesignKind, key: string) => designDocId(ctx.site._id, kind, key);

export async function readDesign<V>(ctx: OperationContext, kind: DesignKind, key: string): Promise<DesignDoc<V> | null> {
  return designCollection<V>(ctx).findOne({ _id: designId(ctx, kind, key), siteId: ctx.site._id });
}

export async function listDesign<V>(ctx: OperationContext, kind: DesignKind, limit = 1000): Promise<DesignDoc<V>[]> {
  return designCollection<V>(ctx).find({ siteId: ctx.site._id, kind }).sort({ _id: 1 }).limit(limit).toArray();
}

export async function writeDesign<V>(ctx: OperationContext, kind: DesignKind, key: string, value: V): Promise<DesignDoc<V>> {
  const updatedAt = ctx.services.clock.now();
  const _id = designId(ctx, kind, key);
  await designCollection<V>(ctx).updateOne({ _id, siteId: ctx.site._id }, { $set: { kind, key, value, updatedAt } as never }, { upsert: true });
  return { _id, siteId: ctx.site._id, kind, key, value, updatedAt };
}

export async function deleteDesign(ctx: OperationContext, kind: DesignKind, key: string): Promise<boolean> {
  const { deletedCount } = await designCollection(ctx).deleteOne({ _id: designId(ctx, kind, key), siteId: ctx.site._id });
  return deletedCount > 0;
}
