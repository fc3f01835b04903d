import { z } from 'zod';
import type { PluginDefinition } from '../definition.ts';
import { defineOperation } from '../../core/operation.ts';

/** Shape of the catalog entries `webhook.eventTypes` carries (services/events/catalog.ts). */
interface EventDescriptor {
  event: string;
  description: string;
  data: Record<string, string>;
}

interface OpenApiLike {
  components?: { schemas?: Record<string, unknown> };
}

interface ToolLike {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  run(ctx: unknown, args: unknown): Promise<unknown>;
}

/** Search engines cut titles and descriptions around these lengths. */
const TITLE_MAX = 60;
const DESCRIPTION_MAX = 160;

function seoHints(args: unknown): { title: number; description: number; hints: string[] } {
  const input = (args ?? {}) as { title?: unknown; description?: unknown };
  const title = typeof input.title === 'string' ? input.title : '';
  const description = typeof input.description === 'string' ? input.description : '';
  const hints: string[] = [];
  if (!title) hints.push('title is empty');
  if (title.length > TITLE_MAX) hints.push(`title is longer than ${TITLE_MAX} characters`);
  if (!description) hints.push('description is empty');
  if (description.length > DESCRIPTION_MAX) hints.push(`description is longer than ${DESCRIPTION_MAX} characters`);
  return { title: title.length, description: description.length, hints };
}

interface SeoSettingsDoc {
  _id: string;
  siteId: string;
  values: { titleSuffix: string };
}

/** A plugin route: served (and documented) only on sites where the plugin is active. */
const seoSettingsOp = defineOperation({
  id: 'seo.settings.get',
  surface: 'manage',
  method: 'GET',
  path: '/seo/settings',
  summary: 'SEO plugin settings of this site (seo-fields plugin)',
  requires: 'settings:read',
  input: z.object({}),
  output: z.object({ titleSuffix: z.string() }),
  async handler(ctx) {
    const doc = await ctx.db.collection<SeoSettingsDoc>('plugin_settings').findOne({ _id: `${ctx.site._id}:seo-fields`, siteId: ctx.site._id });
    return { titleSuffix: doc?.values.titleSuffix ?? '' };
  },
});

/**
 * Sample plugin: SEO fields for entries. Shows three of the host's filters: a webhook event type
 * (`seo.updated`), an OpenAPI schema and an agent tool, plus a route of its own. Activation seeds
 * its per-site settings.
 */
export const seoFieldsPlugin: PluginDefinition = {
  id: 'seo-fields',
  name: 'SEO fields',
  version: '1.0.0',
  description: 'Meta title and description per entry, an `seo.updated` webhook event, an `seo_check` agent tool and `GET /seo/settings`.',
  operations: [seoSettingsOp],
  register(api) {
    api.addFilter<EventDescriptor[]>('webhook.eventTypes', (events) => [
      ...events,
      { event: 'seo.updated', description: 'The SEO fields of an entry changed.', data: { id: 'string', metaTitle: 'string', metaDescription: 'string' } },
    ]);
    api.addFilter<OpenApiLike>('openapi.document', (doc, args) => {
      if (args.surface !== 'manage') return doc;
      doc.components ??= {};
      doc.components.schemas = {
        ...doc.components.schemas,
        SeoFields: {
          type: 'object',
          properties: { metaTitle: { type: 'string', maxLength: TITLE_MAX }, metaDescription: { type: 'string', maxLength: DESCRIPTION_MAX } },
        },
      };
      return doc;
    });
    api.addFilter<ToolLike[]>('mcp.tools', (tools) => [
      ...tools,
      {
        name: 'seo_check',
        description: 'Checks a meta title and description against search-engine length limits.',
        inputSchema: { type: 'object', properties: { title: { type: 'string' }, description: { type: 'string' } } },
        run: async (_ctx, args) => seoHints(args),
      },
    ]);
  },
  async activate(api) {
    // Idempotent: the activation activity may run twice.
    await api.db
      .collection<{ _id: string; siteId: string }>('plugin_settings')
      .updateOne(
        { _id: `${api.siteId}:${api.pluginId}`, siteId: api.siteId },
        { $setOnInsert: { pluginId: api.pluginId, values: { titleSuffix: '' }, createdAt: api.now() } },
        { upsert: true },
      );
  },
};
