import { Gauge, Registry, type Metric } from 'prom-client';

/**
 * The process's Prometheus series (docs/observability.md). One registry per `Services`, never
 * prom-client's global one, so two worlds in one test process count apart.
 *
 * Counters and histograms are bound once per label set (`bind`): recording is then one addition,
 * with no label hashing or validation, which the cached lanes (a few microseconds per answer) can
 * afford. Labels are bounded by construction: surfaces, operation ids, route patterns, outcomes,
 * quota names; never a workspace, site, key, endpoint or entry id (per-workspace figures are the
 * usage API's).
 */
export interface Metrics {
  readonly registry: Registry;
  /** `http.server.request.duration`, by surface, operation id (or route pattern), status class and lane. */
  readonly requestDuration: BoundHistogram<'surface' | 'operation' | 'status_class' | 'lane'>;
  readonly webhookDeliveries: BoundCounter<'outcome'>;
  /** Pending deliveries and the age of the oldest, as the worker's last drain pass found them. */
  readonly webhookQueueDepth: Gauge;
  readonly webhookOldestPendingAge: Gauge;
  readonly exportRuns: BoundCounter<'mode' | 'outcome'>;
  readonly exportPages: BoundCounter<never>;
  readonly lifecycleSteps: BoundCounter<'step' | 'outcome'>;
  readonly cacheLookups: BoundCounter<'cache' | 'result'>;
  /** From a change's commit to this process applying it (`core/change-feed.ts`). */
  readonly changeFeedLag: BoundHistogram<never>;
  readonly quotaRefusals: BoundCounter<'quota'>;
  readonly rateLimitRefusals: BoundCounter<'surface'>;
  /** Rows the retention pass removed, by kind (`RETENTION_KINDS`: deliveries, attempts, audit, revisions, trash). */
  readonly retentionRemoved: BoundCounter<'kind'>;
  /** 1 while this process reaches the engine (`database`, `temporal`), 0 while it is missing (`core/engines.ts`). */
  readonly engineUp: Gauge<'engine'>;
}

/** What a bound series records into. */
export interface CounterSeries {
  inc(by?: number): void;
}
export interface HistogramSeries {
  observe(value: number): void;
}

type LabelSet<N extends string> = Readonly<Record<N, string>>;

const keyOf = (names: readonly string[], labels: Readonly<Record<string, string>>) => names.map((name) => labels[name]).join('\u0000');

/** A counter in prom-client's metric shape (it serializes it), with series bound once. */
export class BoundCounter<N extends string> {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: LabelSet<N>; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly N[],
  ) {}

  bind(labels: LabelSet<N>): CounterSeries {
    const key = keyOf(this.labelNames, labels);
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { ...labels }, value: 0 };
      this.series.set(key, series);
    }
    const bound = series;
    return {
      inc(by = 1) {
        bound.value += by;
      },
    };
  }

  /** For cold paths (a refusal, a run): binds on each call. */
  inc(labels: LabelSet<N>, by = 1): void {
    this.bind(labels).inc(by);
  }

  get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].map(({ labels, value }) => ({ labels, value })),
    };
  }
}

/** A histogram in prom-client's metric shape, with series bound once; buckets are kept per bucket and summed on a scrape. */
export class BoundHistogram<N extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: LabelSet<N>; counts: Float64Array; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly N[],
    private readonly bounds: readonly number[],
  ) {}

  bind(labels: LabelSet<N>): HistogramSeries {
    const key = keyOf(this.labelNames, labels);
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { ...labels }, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    const bound = series;
    const bounds = this.bounds;
    return {
      observe(value) {
        let i = 0;
        while (i < bounds.length && value > bounds[i]) i++;
        bound.counts[i]++;
        bound.sum += value;
        bound.count++;
      },
    };
  }

  observe(labels: LabelSet<N>, value: number): void {
    this.bind(labels).observe(value);
  }

  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i];
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * OpenTelemetry's advice for `http.server.request.duration`, with sub-millisecond buckets in front:
 * the cached lanes answer in microseconds.
 */
export const REQUEST_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** `2xx`, `4xx`, ...: the status label of every request series. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

export function createMetrics(): Metrics {
  const registry = new Registry();
  const add = <M extends { name: string }>(metric: M): M => {
    registry.registerMetric(metric as unknown as Metric);
    return metric;
  };
  return {
    registry,
    requestDuration: add(
      new BoundHistogram(
        'http_server_request_duration_seconds',
        'Duration of HTTP server requests (OpenTelemetry http.server.request.duration).',
        ['surface', 'operation', 'status_class', 'lane'],
        REQUEST_DURATION_BUCKETS,
      ),
    ),
    webhookDeliveries: add(new BoundCounter('cwb_webhook_deliveries_total', 'Webhook delivery attempts by outcome.', ['outcome'])),
    webhookQueueDepth: new Gauge({ name: 'cwb_webhook_queue_depth', help: 'Pending webhook deliveries at the last drain pass.', registers: [registry] }),
    webhookOldestPendingAge: new Gauge({
      name: 'cwb_webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest pending webhook delivery at the last drain pass (0: none pending).',
      registers: [registry],
    }),
    exportRuns: add(new BoundCounter('cwb_export_runs_total', 'Static export runs by mode and outcome (started, finished, aborted).', ['mode', 'outcome'])),
    exportPages: add(new BoundCounter('cwb_export_pages_total', 'Static export pages rendered.', [])),
    lifecycleSteps: add(
      new BoundCounter('cwb_lifecycle_steps_total', 'Workspace lifecycle steps run by the worker, by step and outcome.', ['step', 'outcome']),
    ),
    cacheLookups: add(new BoundCounter('cwb_cache_lookups_total', 'Cache lookups by cache and result (hit, miss).', ['cache', 'result'])),
    changeFeedLag: add(new BoundHistogram('cwb_change_feed_lag_seconds', 'From a state change being written to this process applying it.', [], LAG_BUCKETS)),
    quotaRefusals: add(new BoundCounter('cwb_quota_refusals_total', 'Calls refused by a platform quota, by quota.', ['quota'])),
    rateLimitRefusals: add(new BoundCounter('cwb_rate_limit_refusals_total', 'Calls refused by a rate limit (429), by surface.', ['surface'])),
    retentionRemoved: add(new BoundCounter('cwb_retention_removed_total', 'Rows removed by the retention pass, by kind.', ['kind'])),
    engineUp: new Gauge({
      name: 'cwb_engine_up',
      help: 'Whether this process reaches the engine (1) or finds it missing (0): database (MongoDB, by cluster label), temporal.',
      labelNames: ['engine', 'cluster'],
      registers: [registry],
    }),
  };
}
