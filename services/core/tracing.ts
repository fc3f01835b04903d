import { context, ROOT_CONTEXT, trace, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  RandomIdGenerator,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Config } from './config.ts';
import { ThreadedOtlpSpanExporter } from './span-export-thread.ts';
import { serviceVersion } from './version.ts';

/** Which process the services run in: names the traces' service when `OTEL_SERVICE_NAME` does not. */
export type ProcessRole = 'gateway' | 'worker';

/**
 * The process's tracing (docs/observability.md): the OpenTelemetry SDK configured by its standard
 * variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `..._PROTOCOL`, `OTEL_SERVICE_NAME`,
 * `OTEL_TRACES_SAMPLER(_ARG)` (validated in config.ts, with our own default), `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`). Off when
 * no endpoint is set: then nothing is registered and every instrumented place skips its work on
 * `enabled`, so the untraced process pays one boolean test per request.
 */
export interface Tracing {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** A random W3C trace id: a cache lane draws it before deciding anything (`startRootSpan`). */
  newTraceId(): string;
  /**
   * A root span decided before anything is built (the cache lanes, request-telemetry.ts): the
   * sampler is asked about `traceId` first, and when it drops the trace nothing is made (undefined);
   * else the span starts on that very trace id, so the ratio samplers, a function of the trace id,
   * decide the same as for any other root span. No context is entered.
   */
  startRootSpan(traceId: string, name: string, kind: SpanKind): Span | undefined;
  /** The worker hands these to Temporal's workflow span sink (the isolate has no exporter). */
  readonly spanProcessor?: SpanProcessor;
  readonly resource?: Resource;
  /** Sends the spans still queued (on a drain). */
  shutdown(): Promise<void>;
}

export const tracingConfigured = (config: Config): boolean =>
  !config.OTEL_SDK_DISABLED && Boolean(config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_ENDPOINT);

/**
 * Builds the provider once per process and registers it globally: the context manager
 * (AsyncLocalStorage) has to be global for a span to follow a request through its awaits, and
 * Temporal's interceptors read the global API.
 */
export function createTracing(config: Config, role: ProcessRole): Tracing {
  if (!tracingConfigured(config)) {
    const ids = new RandomIdGenerator();
    return {
      enabled: false,
      tracer: trace.getTracer('cwb'),
      newTraceId: () => ids.generateTraceId(),
      startRootSpan: () => undefined,
      shutdown: async () => undefined,
    };
  }
  const protocol = config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL;
  // The exporter reads the endpoint, headers and timeout from the standard variables itself, in
  // a thread of its own (span-export-thread.ts says why).
  const exporter = new ThreadedOtlpSpanExporter(protocol);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: `cwb-${role}`, [ATTR_SERVICE_VERSION]: serviceVersion }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults above.
    .merge(detectResources({ detectors: [envDetector] }));
  const spanProcessor = new BatchSpanProcessor(exporter);
  const sampler = samplerOf(config);
  const ids = new DrawnTraceIds();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor], sampler, idGenerator: ids });
  provider.register();
  const tracer = provider.getTracer('cwb', serviceVersion);
  return {
    enabled: true,
    tracer,
    newTraceId: () => ids.random.generateTraceId(),
    startRootSpan(traceId, name, kind) {
      if (sampler.shouldSample(ROOT_CONTEXT, traceId, name, kind, {}, []).decision === SamplingDecision.NOT_RECORD) return undefined;
      return ids.startingOn(traceId, () => tracer.startSpan(name, { kind }, ROOT_CONTEXT));
    },
    spanProcessor,
    resource,
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The provider's id generator, which can be handed the trace id of the root span about to start:
 * the SDK's tracer takes no trace id, and a lane's sampling is decided on the id before the span
 * exists. Synchronous: `startSpan` draws its root trace id before returning.
 */
class DrawnTraceIds implements IdGenerator {
  readonly random = new RandomIdGenerator();
  private drawn: string | undefined;

  generateTraceId(): string {
    return this.drawn ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }

  startingOn<T>(traceId: string, start: () => T): T {
    this.drawn = traceId;
    try {
      return start();
    } finally {
      this.drawn = undefined;
    }
  }
}

/** The standard sampler names, with the ratio of the configuration (its default differs from the SDK's: config.ts). */
function samplerOf(config: Config): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG);
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/** What `activeTraceFields` gives a line written outside any span: nothing to merge (logger.ts). */
export const NO_TRACE_FIELDS: Readonly<Record<string, string>> = Object.freeze({});

/** The active span's ids for a log line (pino's mixin): the OpenTelemetry log data model's field names. */
export function activeTraceFields(): Readonly<Record<string, string>> {
  const span = trace.getSpan(context.active());
  if (!span) return NO_TRACE_FIELDS;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}` };
}
