import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type HrTime,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { hrTime, hrTimeDuration, type InstrumentationScope } from '@opentelemetry/core';
import { StorageHolds } from './storage-holds.ts';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
  type ReadableSpan,
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
  /**
   * A root trace decided before anything is built (the cache lanes, request-telemetry.ts): one
   * random draw (`rootDraw`); undefined when the sampler would drop it, else a trace id it keeps.
   */
  drawRootTrace(): string | undefined;
  /**
   * A root server span of a trace `drawRootTrace` kept, recorded once it is over, without the SDK's
   * span objects (a cache lane's answer): handed to the span processor like any finished span.
   * Making and ending an SDK span on the lane cost every lane answer after it more CPU than the
   * span itself (bench/RESULTS.md, session 12).
   */
  recordRoot(root: FinishedRoot): void;
  /** A span id for such a root, known before it ends (its access-log line names it). */
  newSpanId(): string;
  /** A random trace id (the context of a call made outside any trace: temporal-tracing.ts). */
  newTraceId(): string;
  /**
   * Runs `run` inside `ctx` (a request's span: what it awaits follows it) and returns the release
   * of that hold, called when the request is over. The context's AsyncLocalStorage is enabled only
   * while some hold is open: enabled, Node 20 runs a hook for every promise the process makes, a
   * tenth of a write's CPU (bench/RESULTS.md, session 12), for the requests the sampler dropped too.
   * In the gateway only: a worker's activities run in contexts Temporal's interceptor enters
   * without a hold, which disabling the storage would cut, so there a release does nothing.
   */
  holdContext(ctx: Context, run: () => void): () => void;
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
      drawRootTrace: () => undefined,
      recordRoot: () => undefined,
      newSpanId: () => ids.generateSpanId(),
      newTraceId: () => ids.generateTraceId(),
      holdContext: (_ctx, run) => {
        run();
        return () => undefined;
      },
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
  const ids = new RandomIdGenerator();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor], sampler });
  const held = role === 'gateway' ? new HeldContextManager() : undefined;
  const contextManager = held ?? new AsyncLocalStorageContextManager();
  provider.register({ contextManager });
  const scope: InstrumentationScope = { name: 'cwb', version: serviceVersion };
  const tracer = provider.getTracer(scope.name, scope.version);
  return {
    enabled: true,
    tracer,
    drawRootTrace: rootDraw(config, ids),
    recordRoot: (root) => spanProcessor.onEnd(new FinishedRootSpan(root, resource, scope)),
    newSpanId: () => ids.generateSpanId(),
    newTraceId: () => ids.generateTraceId(),
    holdContext: held
      ? (ctx, run) => held.hold(ctx, run)
      : (ctx, run) => {
          contextManager.with(ctx, run);
          return () => undefined;
        },
    spanProcessor,
    resource,
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The gateway's context manager: its AsyncLocalStorage is enabled only while a hold is open
 * (`Tracing.holdContext`). The last release disables it, and so does the end of any `with` entered
 * outside a hold (the span processor's export enters one): what runs after that (work a request
 * left behind its answer, an export's callback) runs outside the span, and its spans are not made.
 */
class HeldContextManager extends AsyncLocalStorageContextManager {
  private readonly holds = new StorageHolds(() => this.disable());

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    try {
      return super.with(ctx, fn, thisArg, ...args);
    } finally {
      if (this.holds.none) this.disable();
    }
  }

  hold(ctx: Context, run: () => void): () => void {
    const release = this.holds.hold();
    try {
      this.with(ctx, run);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }
}

/** A root server span that is over: what a cache lane knows of its answer (`Tracing.recordRoot`). */
export interface FinishedRoot {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  /** `performance.now()` when the answer started and when it ended. */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly attributes: Attributes;
  readonly failed: boolean;
}

/** A `FinishedRoot` as the span processor and the OTLP serializer read a span. */
class FinishedRootSpan implements ReadableSpan {
  readonly kind = SpanKind.SERVER;
  readonly name: string;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly duration: HrTime;
  readonly status: ReadableSpan['status'];
  readonly attributes: Attributes;
  readonly links = [];
  readonly events = [];
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  private readonly context: SpanContext;

  constructor(
    root: FinishedRoot,
    readonly resource: Resource,
    readonly instrumentationScope: InstrumentationScope,
  ) {
    this.name = root.name;
    this.startTime = hrTime(root.startedAt);
    this.endTime = hrTime(root.endedAt);
    this.duration = hrTimeDuration(this.startTime, this.endTime);
    this.status = { code: root.failed ? SpanStatusCode.ERROR : SpanStatusCode.UNSET };
    this.attributes = root.attributes;
    this.context = { traceId: root.traceId, spanId: root.spanId, traceFlags: TraceFlags.SAMPLED };
  }

  spanContext(): SpanContext {
    return this.context;
  }
}

/**
 * A root trace's sampling in one `Math.random()`: the trace id of a kept root span, or undefined
 * for a dropped one. Asking the sampler costs a trace id drawn and hex-encoded and, for a ratio, the
 * id parsed back into words, on every request a cache lane answers, 999 in 1,000 of them for nothing
 * (bench/RESULTS.md). The ratio samplers keep a trace id whose four 32-bit words XOR below
 * `floor(ratio * 0xffffffff)` (`TraceIdRatioBasedSampler`): the draw keeps a trace with that very
 * probability, then makes its id uniformly among the ids the sampler keeps (three random words, the
 * fourth chosen to XOR to a random value under the bound). test/foundation/root-draw.test.ts holds
 * the SDK's sampler to that rule.
 */
export function rootDraw(config: Pick<Config, 'OTEL_TRACES_SAMPLER' | 'OTEL_TRACES_SAMPLER_ARG'>, ids: IdGenerator): () => string | undefined {
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
    case 'parentbased_always_on':
      return () => ids.generateTraceId();
    case 'always_off':
    case 'parentbased_always_off':
      return () => undefined;
    case 'traceidratio':
    case 'parentbased_traceidratio': {
      const bound = Math.floor(config.OTEL_TRACES_SAMPLER_ARG * 0xffffffff);
      const word = () => (Math.random() * 0x1_0000_0000) >>> 0;
      const bytes = Buffer.alloc(16);
      return () => {
        if (Math.random() * 0x1_0000_0000 >= bound) return undefined;
        const [a, b, c] = [word(), word(), word()];
        const d = (Math.floor(Math.random() * bound) ^ a ^ b ^ c) >>> 0;
        // Four zero words are no valid trace id (one chance in 2^96): that trace is dropped.
        if ((a | b | c | d) === 0) return undefined;
        bytes.writeUInt32BE(a, 0);
        bytes.writeUInt32BE(b, 4);
        bytes.writeUInt32BE(c, 8);
        bytes.writeUInt32BE(d, 12);
        // Hex-encoded like the SDK's own ids (one flat string, not one built of pieces).
        return bytes.toString('hex');
      };
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

/** Trace flags as the OpenTelemetry log data model writes them: `01` for a sampled trace. */
export const logTraceFlags = (flags: number): string => `0${flags.toString(16)}`;

/** The active span's ids for a log line (pino's mixin): the OpenTelemetry log data model's field names. */
export function activeTraceFields(): Readonly<Record<string, string>> {
  const span = trace.getSpan(context.active());
  if (!span) return NO_TRACE_FIELDS;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: logTraceFlags(traceFlags) };
}
