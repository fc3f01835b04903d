import type { PluginDefinition } from '../definition.ts';

interface Envelope {
  event?: unknown;
  data?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * Sample plugin: adds a one-line `summary` to every webhook body (`webhook.payload`), which chat
 * receivers can post as is. No activation routine: activating only switches the filter on.
 */
export const webhookSummaryPlugin: PluginDefinition = {
  id: 'webhook-summary',
  name: 'Webhook summary line',
  version: '1.0.0',
  description: 'Adds a human-readable `summary` line to webhook payloads.',
  register(api) {
    api.addFilter<Envelope>('webhook.payload', (envelope) => {
      const title = typeof envelope.data?.title === 'string' ? `: ${envelope.data.title}` : '';
      return { ...envelope, summary: `${String(envelope.event)}${title}` };
    });
  },
};
