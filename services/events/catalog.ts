import { z } from 'zod';
import type { Services } from '../core/context.ts';
import { CapabilitySchema, type Capability } from '../core/capabilities.ts';

export const EventDescriptorSchema = z.object({
  event: z.string(),
  description: z.string(),
  data: z.record(z.string(), z.string()),
  /**
   * The capability needed to read the event's data: to subscribe to it, and for its endpoint to
   * keep receiving it (the endpoint's creator must still hold it when the event is fanned out).
   */
  requires: CapabilitySchema,
});
export type EventDescriptor = z.infer<typeof EventDescriptorSchema>;

/**
 * What a plugin's event needs when its descriptor names nothing: the plugin's data is unknown here,
 * so only a site administrator may subscribe to it. Plugins name the right capability (`requires`).
 */
export const PLUGIN_EVENT_DEFAULT_REQUIRES: Capability = 'site:admin';

/** A plugin may leave `requires` out (then `PLUGIN_EVENT_DEFAULT_REQUIRES`); core events all name it. */
const PluginDescriptorSchema = EventDescriptorSchema.extend({ requires: CapabilitySchema.default(PLUGIN_EVENT_DEFAULT_REQUIRES) });

/** Every content event carries the entry as it is after the change (version as a decimal string). */
const entryData = { id: 'string', type: 'string', slug: 'string', locale: 'string', status: 'string', version: 'string' };

/**
 * The core catalog (contract 6.1) plus `settings.updated` (headless frontends cache site-wide
 * settings such as title and permalinks and need to know when to refresh) and `theme.uninstalled`
 * (the pair of `theme.installed` once themes can be uninstalled, issue 22).
 * `data` lists the fields of each event's data and their types, `requires` the capability that
 * reads that data through the API (entries → content:read, users and sign-ins → users:read, the
 * service's version → site:admin, as `GET /diagnostics`); docs/webhooks.md says which operation
 * emits each one.
 */
export const CORE_EVENTS: readonly EventDescriptor[] = [
  { event: 'content.created', description: 'A content entry was created.', data: { ...entryData }, requires: 'content:read' },
  {
    event: 'content.updated',
    description: 'A content entry was changed (fields, draft or working revision).',
    data: { ...entryData },
    requires: 'content:read',
  },
  {
    event: 'content.published',
    description: 'A content entry became published (directly or by its schedule).',
    data: { ...entryData },
    requires: 'content:read',
  },
  {
    event: 'content.unpublished',
    description: 'A published entry went back to draft (directly or by its schedule).',
    data: { ...entryData },
    requires: 'content:read',
  },
  { event: 'content.deleted', description: 'A content entry was moved to the trash.', data: { ...entryData }, requires: 'content:read' },
  {
    event: 'media.uploaded',
    description: 'A media file was uploaded.',
    data: { id: 'string', filename: 'string', mimeType: 'string', size: 'integer', url: 'string' },
    requires: 'media:read',
  },
  {
    event: 'media.replaced',
    description: "A media item's file was replaced (same id, new bytes and URL).",
    data: { id: 'string', filename: 'string', mimeType: 'string', size: 'integer', url: 'string' },
    requires: 'media:read',
  },
  { event: 'media.deleted', description: 'A media item was moved to the trash.', data: { id: 'string', filename: 'string' }, requires: 'media:read' },
  { event: 'media.restored', description: 'A media item was restored from the trash.', data: { id: 'string', filename: 'string' }, requires: 'media:read' },
  { event: 'user.created', description: 'A user was created.', data: { id: 'string', email: 'string', role: 'string' }, requires: 'users:read' },
  {
    event: 'user.updated',
    description: "A user's role, policy or display name changed.",
    data: { id: 'string', email: 'string', role: 'string' },
    requires: 'users:read',
  },
  { event: 'user.deleted', description: 'A user was deleted.', data: { id: 'string' }, requires: 'users:read' },
  { event: 'auth.login', description: 'A user signed in.', data: { userId: 'string' }, requires: 'users:read' },
  { event: 'auth.logout', description: 'A user signed out.', data: { userId: 'string' }, requires: 'users:read' },
  { event: 'plugin.installed', description: 'A plugin was installed.', data: { id: 'string', name: 'string', version: 'string' }, requires: 'plugins:read' },
  { event: 'plugin.activated', description: 'A plugin was activated.', data: { id: 'string' }, requires: 'plugins:read' },
  { event: 'plugin.deactivated', description: 'A plugin was deactivated.', data: { id: 'string' }, requires: 'plugins:read' },
  { event: 'plugin.uninstalled', description: 'A plugin was removed.', data: { id: 'string' }, requires: 'plugins:read' },
  { event: 'theme.installed', description: 'A theme was installed.', data: { id: 'string', name: 'string', version: 'string' }, requires: 'themes:read' },
  { event: 'theme.activated', description: 'A theme became the active theme.', data: { id: 'string', previous: 'string | null' }, requires: 'themes:read' },
  { event: 'theme.uninstalled', description: 'A catalog theme was removed from the site.', data: { id: 'string' }, requires: 'themes:read' },
  { event: 'core.updated', description: 'The service was upgraded to a new version.', data: { from: 'string', to: 'string' }, requires: 'site:admin' },
  { event: 'settings.updated', description: 'Site settings were changed.', data: { changed: 'string[]' }, requires: 'settings:read' },
];

const CORE_READ_RIGHTS = new Map(CORE_EVENTS.map((d) => [d.event, d.requires]));

/** The catalog a site offers: the core events, then what plugins add through `webhook.eventTypes`. */
export async function listEventDescriptors(services: Services, siteId: string): Promise<EventDescriptor[]> {
  const filtered = await services.hooks.applyFilters<EventDescriptor[]>(
    'webhook.eventTypes',
    CORE_EVENTS.map((e) => ({ ...e, data: { ...e.data } })),
    { siteId },
  );
  const seen = new Set<string>();
  const result: EventDescriptor[] = [];
  for (const candidate of Array.isArray(filtered) ? filtered : []) {
    const parsed = PluginDescriptorSchema.safeParse(candidate);
    // A malformed plugin entry is skipped rather than breaking the catalog for everyone.
    if (!parsed.success || seen.has(parsed.data.event)) continue;
    seen.add(parsed.data.event);
    // A filter may reword a core event, never lower what reading it takes.
    result.push({ ...parsed.data, requires: CORE_READ_RIGHTS.get(parsed.data.event) ?? parsed.data.requires });
  }
  return result;
}

/** Each event of the site's catalog and the capability that reads its data. */
export async function eventReadRights(services: Services, siteId: string): Promise<Map<string, Capability>> {
  return new Map((await listEventDescriptors(services, siteId)).map((d) => [d.event, d.requires]));
}

/**
 * The capability that reads one event's data, as the publisher needs it on every emit: a core
 * event's from memory, a plugin's from the catalog (the filter runs only for those); an event no
 * longer in the catalog needs what an unknown plugin event needs.
 */
export async function eventReadRight(services: Services, siteId: string, event: string): Promise<Capability> {
  return CORE_READ_RIGHTS.get(event) ?? (await eventReadRights(services, siteId)).get(event) ?? PLUGIN_EVENT_DEFAULT_REQUIRES;
}
