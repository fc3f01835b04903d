import { z } from 'zod';
import type { Services } from '../core/context.ts';

export const EventDescriptorSchema = z.object({
  event: z.string(),
  description: z.string(),
  data: z.record(z.string(), z.string()),
});
export type EventDescriptor = z.infer<typeof EventDescriptorSchema>;

/** Every content event carries the entry as it is after the change (version as a decimal string). */
const entryData = { id: 'string', type: 'string', slug: 'string', locale: 'string', status: 'string', version: 'string' };

/**
 * The core catalog (contract 6.1) plus `settings.updated`, the twentieth event chosen here:
 * headless frontends cache site-wide settings (title, permalinks) and need to know when to refresh.
 * `data` lists the fields of each event's data and their types; docs/webhooks.md says which
 * operation emits each one.
 */
export const CORE_EVENTS: readonly EventDescriptor[] = [
  { event: 'content.created', description: 'A content entry was created.', data: { ...entryData } },
  { event: 'content.updated', description: 'A content entry was changed (fields, draft or working revision).', data: { ...entryData } },
  { event: 'content.published', description: 'A content entry became published (directly or by its schedule).', data: { ...entryData } },
  { event: 'content.unpublished', description: 'A published entry went back to draft (directly or by its schedule).', data: { ...entryData } },
  { event: 'content.deleted', description: 'A content entry was moved to the trash.', data: { ...entryData } },
  { event: 'media.uploaded', description: 'A media file was uploaded.', data: { id: 'string', filename: 'string', mimeType: 'string', size: 'integer', url: 'string' } },
  { event: 'media.deleted', description: 'A media item was moved to the trash.', data: { id: 'string', filename: 'string' } },
  { event: 'user.created', description: 'A user was created.', data: { id: 'string', email: 'string', role: 'string' } },
  { event: 'user.updated', description: 'A user\'s role, policy or display name changed.', data: { id: 'string', email: 'string', role: 'string' } },
  { event: 'user.deleted', description: 'A user was deleted.', data: { id: 'string' } },
  { event: 'auth.login', description: 'A user signed in.', data: { userId: 'string' } },
  { event: 'auth.logout', description: 'A user signed out.', data: { userId: 'string' } },
  { event: 'plugin.installed', description: 'A plugin was installed.', data: { id: 'string', name: 'string', version: 'string' } },
  { event: 'plugin.activated', description: 'A plugin was activated.', data: { id: 'string' } },
  { event: 'plugin.deactivated', description: 'A plugin was deactivated.', data: { id: 'string' } },
  { event: 'plugin.uninstalled', description: 'A plugin was removed.', data: { id: 'string' } },
  { event: 'theme.installed', description: 'A theme was installed.', data: { id: 'string', name: 'string', version: 'string' } },
  { event: 'theme.activated', description: 'A theme became the active theme.', data: { id: 'string', previous: 'string | null' } },
  { event: 'core.updated', description: 'The service was upgraded to a new version.', data: { from: 'string', to: 'string' } },
  { event: 'settings.updated', description: 'Site settings were changed.', data: { changed: 'string[]' } },
];

/** The catalog a site offers: the core events, then what plugins add through `webhook.eventTypes`. */
export async function listEventDescriptors(services: Services, siteId: string): Promise<EventDescriptor[]> {
  const filtered = await services.hooks.applyFilters<EventDescriptor[]>('webhook.eventTypes', CORE_EVENTS.map((e) => ({ ...e, data: { ...e.data } })), { siteId });
  const seen = new Set<string>();
  const result: EventDescriptor[] = [];
  for (const candidate of Array.isArray(filtered) ? filtered : []) {
    const parsed = EventDescriptorSchema.safeParse(candidate);
    // A malformed plugin entry is skipped rather than breaking the catalog for everyone.
    if (!parsed.success || seen.has(parsed.data.event)) continue;
    seen.add(parsed.data.event);
    result.push(parsed.data);
  }
  return result;
}

export async function knownEventNames(services: Services, siteId: string): Promise<Set<string>> {
  return new Set((await listEventDescriptors(services, siteId)).map((d) => d.event));
}
