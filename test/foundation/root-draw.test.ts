import { describe, expect, it } from 'vitest';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { RandomIdGenerator, SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { rootDraw } from '../../services/core/tracing.ts';

// A cache lane decides a root trace with one random draw, then makes a trace id the configured
// sampler keeps (services/core/tracing.ts). Held here against the SDK's own ratio sampler: should
// the SDK change its rule, the lanes' spans would silently differ from every other root's.
describe('rootDraw', () => {
  const ids = new RandomIdGenerator();
  const draws = (sampler: 'traceidratio' | 'parentbased_traceidratio', ratio: number, n: number) => {
    const draw = rootDraw({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: ratio }, ids);
    return Array.from({ length: n }, draw).filter((id): id is string => id !== undefined);
  };

  it('keeps a trace at the ratio, on a valid trace id the SDK sampler keeps too', () => {
    const sdk = new TraceIdRatioBasedSampler(0.25);
    const kept = draws('parentbased_traceidratio', 0.25, 20_000);
    // Binomial(20,000, 0.25): 5,000 ± 61 (one sigma); outside 4,600..5,400 practically never.
    expect(kept.length).toBeGreaterThan(4_600);
    expect(kept.length).toBeLessThan(5_400);
    for (const id of kept) {
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(id).not.toBe('0'.repeat(32));
      expect(sdk.shouldSample(ROOT_CONTEXT, id).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    }
    expect(new Set(kept).size).toBe(kept.length);
  });

  it('keeps nothing at ratio 0, everything at 1 and under always_on, nothing under always_off', () => {
    expect(draws('traceidratio', 0, 2_000)).toEqual([]);
    const all = draws('traceidratio', 1, 2_000);
    expect(all).toHaveLength(2_000);
    const sdk = new TraceIdRatioBasedSampler(1);
    for (const id of all) expect(sdk.shouldSample(ROOT_CONTEXT, id).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    const on = rootDraw({ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: 0 }, ids);
    expect(on()).toMatch(/^[0-9a-f]{32}$/);
    const off = rootDraw({ OTEL_TRACES_SAMPLER: 'parentbased_always_off', OTEL_TRACES_SAMPLER_ARG: 1 }, ids);
    expect(off()).toBeUndefined();
  });
});
