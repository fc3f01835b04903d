import type { Services } from '../services/core/context.ts';

export function createProbeActivities(services: Services) {
  return {
    /** Idempotent: the probe id is the document id, so a retried attempt rewrites the same row. */
    async stampProbe(probeId: string): Promise<string> {
      const stampedAt = services.clock.now();
      await services.platformDb.collection<{ _id: string; stampedAt: Date }>('probes').updateOne({ _id: probeId }, { $set: { stampedAt } }, { upsert: true });
      return stampedAt.toISOString();
    },
  };
}
