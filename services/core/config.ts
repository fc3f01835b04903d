import { z } from 'zod';
import { NO_PROXY, parseProxyTrust } from './proxy-trust.ts';
import { DurationText } from './duration.ts';
import { parseClusters } from './clusters.ts';

const booleanFlag = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((value) => value === 'true' || value === '1' || value === 'yes');

const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  MONGODB_URI: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URI'),
  /** More MongoDB clusters for workspace databases, by label (docs/placement.md); MONGODB_URI stays `default`. */
  MONGODB_CLUSTERS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      try {
        return parseClusters(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Prefix of every database name, so several deployments (or test runs) can share one server. */
  DB_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]{1,24}$/, 'lowercase letters, digits and _ only')
    .default('cwb_'),
  TEMPORAL_ADDRESS: z.string().regex(/^[^:\s]+:\d+$/, 'must be host:port'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('cwb'),
  DATA_DIR: z.string().min(1).default('.data'),
  /** Where the local backup store keeps archives (docs/backups.md); unset: `DATA_DIR/backups`. A volume every gateway and worker shares. */
  BACKUP_DIR: z.string().min(1).optional(),
  /** Signs cursors and derives other server-side secrets. Never logged, never returned. */
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters'),
  ADMIN_EMAIL: z.email().optional(),
  ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1_048_576),
  /** How long a workspace lifecycle route waits for its step before answering 202 with the state so far. */
  LIFECYCLE_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  /** How long a deleted workspace's data is kept before it is purged (`7d`, `36h`, `0`: at once; docs/lifecycle.md). In ms once parsed. */
  WORKSPACE_DELETE_GRACE: DurationText.prefault('7d'),
  /**
   * The longest a request waits for a missing engine (MongoDB, Temporal) before it is answered 503
   * with Retry-After (docs/production.md, "Degrade, never hang"): MongoDB's server selection and
   * every Temporal call without a deadline of its own are bounded by it.
   */
  ENGINE_WAIT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** Host → site answers a gateway keeps (least recently used go first). */
  SITE_CACHE_ENTRIES: z.coerce.number().int().min(100).max(1_000_000).default(10_000),
  /**
   * Outgoing mail (docs/accounts.md): `smtp://user:pass@host:port` or `smtps://…`. Unset: mails are
   * written to DATA_DIR/mail/ and announced by one log line (development).
   */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The From address of a site's mails unless its settings name one (`email.from`). */
  MAIL_FROM: z.email().default('no-reply@localhost.localdomain'),
  /** Only for tests and local development with a local webhook receiver. Off by default. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  /**
   * The proxies in front of the gateways, by address/CIDR list or hop count (core/proxy-trust.ts):
   * only they may name the client in X-Forwarded-*; set, session cookies are marked Secure.
   * Unset/`false`: nobody. `true` is refused (anyone could forge their address).
   */
  TRUST_PROXY: z
    .string()
    .transform((text, ctx) => {
      const trust = parseProxyTrust(text);
      if (!('error' in trust)) return trust;
      ctx.addIssue({ code: 'custom', message: trust.error });
      return z.NEVER;
    })
    .default(NO_PROXY),
  /**
   * Lease of a gateway's in-memory access state (docs/access.md): a write that changes access waits
   * at most about this long for a gateway that stopped answering. Lower in tests.
   */
  STATE_LEASE_MS: z.coerce.number().int().min(500).max(60_000).default(5000),
  /**
   * How gateways learn of access changes: `change-stream` (MongoDB replica sets) or `poll` (a small
   * query every 50 ms; the default, because the local engine's change streams re-scan its oplog).
   */
  STATE_FEED: z.enum(['change-stream', 'poll']).default('poll'),
  /**
   * Contract checks in the operation runner: every answer against the operation's `output` schema,
   * every emitted event against its `events` (a violation is a 500 with an error log line). Unset:
   * on unless NODE_ENV is `production`; `true`/`false` forces it either way.
   */
  CHECK_CONTRACTS: booleanFlag.optional(),
  /** Prometheus metrics of the gateway, on a listener of its own (docs/observability.md). Unset: no listener. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** The worker's metrics listener (its own series and the Temporal SDK's). Unset: no listener. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** The worker's probes (`GET /livez`, `GET /readyz`) on a listener of their own, bound to HOST (docs/production.md). Unset: none. */
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Where both metrics listeners bind: loopback unless a scraper elsewhere must reach them. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Traces go to this OTLP/HTTP collector (the SDK appends /v1/traces); neither endpoint set: tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** OTLP over HTTP only (no gRPC exporter is installed). */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /**
   * Which traces are kept (the standard sampler names). Unset: `parentbased_traceidratio` at
   * OTEL_TRACES_SAMPLER_ARG, default 0.001: a caller's sampled `traceparent` is always followed, one
   * trace in a thousand otherwise (docs/observability.md; its cost: bench/RESULTS.md).
   */
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .default('parentbased_traceidratio'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(0.001),
  /** The standard switch: `true` turns tracing off whatever the endpoint. */
  OTEL_SDK_DISABLED: booleanFlag.default(false),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const contractChecksOn = (config: Pick<Config, 'NODE_ENV' | 'CHECK_CONTRACTS'>): boolean => config.CHECK_CONTRACTS ?? config.NODE_ENV !== 'production';

/** Reads and validates the environment. A bad value stops start-up with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const result = ConfigSchema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return result.data;
}
