import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { Tracing } from './tracing.ts';

type Call = (input: unknown, next: (input: unknown) => Promise<unknown>) => Promise<unknown>;

/**
 * Temporal's OpenTelemetry client interceptor (every start, signal and update carries the caller's
 * span to the workflow in its headers), for a process whose requests dropped by the sampler run in
 * no context (`Tracing.holdContext`, http/request-telemetry.ts). A call made outside any span is
 * made under a span the sampler dropped, so its header still says "not sampled": without one, the
 * workflow's isolate (whose sampler keeps every root) would trace every workflow such a request
 * starts or signals, and the interceptor itself would start a trace for the calls its ratio keeps.
 */
export function workflowClientTracing(tracing: Tracing): WorkflowClientInterceptor {
  const inner = new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer }) as unknown as Record<string, Call>;
  const wrapped: Record<string, Call> = {};
  for (const method of Object.getOwnPropertyNames(OpenTelemetryWorkflowClientInterceptor.prototype)) {
    if (method === 'constructor') continue;
    const call: Call = (input, next) => inner[method](input, next);
    wrapped[method] = (input, next) => {
      if (trace.getActiveSpan()) return call(input, next);
      const dropped = trace.setSpanContext(ROOT_CONTEXT, { traceId: tracing.newTraceId(), spanId: tracing.newSpanId(), traceFlags: TraceFlags.NONE });
      let answer!: Promise<unknown>;
      const release = tracing.holdContext(dropped, () => {
        answer = call(input, next);
      });
      return answer.finally(release);
    };
  }
  return wrapped as WorkflowClientInterceptor;
}
