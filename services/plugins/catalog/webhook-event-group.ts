import type { PluginDefinition } from '../definition.ts';

interface Envelope {
  event?: unknown;
  [key: string]: unknown;
}

/**
 * Catalog plugin: adds `group` (the part of the event name before the dot: `content`, `media`,
 * `plugin`, …) to every webhook body, so a receiver can route on one field.
 */
export const webhookEventGroupPlugin: PluginDefinition = {
  id: 'webhook-event-group',
  name: 'Webhook event group',
  version: '1.0.0',
  description: 'Adds a `group` field (content, media, user, …) to webhook payloads.',
  register(api) {
    api.addFilter<Envelope>('webhook.payload', (envelope) => ({ ...envelope, group: String(envelope.event ?? '').split('.')[0] }));
  },
};
