import type { Db, MongoClient } from 'mongodb';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { ChangeFeed } from './change-feed.ts';
import type { WriteWatch } from './write-watch.ts';
import type { PublicGeneration } from './public-generation.ts';
import type { Clock } from './clock.ts';
import type { Metrics } from './metrics.ts';
import type { Tracing } from './tracing.ts';
import type { CursorCodec } from './cursors.ts';
import type { Hooks } from './hooks.ts';
import type { Principal } from './principal.ts';
import type { Site, Workspace } from './tenants.ts';
import { contextScope, type ScopeGuard } from './scope.ts';
import type { ChangeNotes } from './audit-notes.ts';
import type { BoundedTemporalCalls, EngineWatch } from './engines.ts';
import type { Placement, PlacedWorkspace } from './placement.ts';

/** Publishes a domain event to whoever subscribed (webhooks). Never throws into the operation. */
export interface EventPublisher {
  publish(ctx: OperationContext, event: string, data: Record<string, unknown>): Promise<void>;
}

/**
 * Process-wide dependencies, built once by the gateway or the worker (`services/runtime.ts`).
 * The members below are the ground floor, built by `createServices`. Members whose types belong to
 * a feature (the site resolver, the feature list, webhook settings, caches, ...) are declared in
 * `services/members.ts`, which adds them to this interface, so core/ never imports upwards.
 */
export interface CoreServices {
  config: Config;
  /** The process's Prometheus series (`core/metrics.ts`), served by the metrics listener. */
  metrics: Metrics;
  /** OpenTelemetry tracing, off unless an OTLP endpoint is configured (`core/tracing.ts`). */
  tracing: Tracing;
  /** Which engines this process finds missing, and the bound on a request's wait for one (`core/engines.ts`). */
  engines: EngineWatch;
  mongo: MongoClient;
  platformDb: Db;
  /**
   * `bounded`: Temporal calls under a deadline or an abort signal (never the client's own
   * `withDeadline` / `withAbortSignal`: `boundedTemporalCalls` in core/engines.ts says why).
   * `settleCalls`: before the connection closes (`core/engines.ts` `TemporalCalls.settle`).
   */
  temporal: { client: Client; taskQueue: string; bounded: BoundedTemporalCalls; settleCalls(): Promise<void> };
  hooks: Hooks;
  cursors: CursorCodec;
  clock: Clock;
  log: Logger;
  events: EventPublisher;
  /** Invalidation feed + lease that keeps per-process state exact (`core/change-feed.ts`). */
  changeFeed: ChangeFeed;
  /** Write generations of the workspace databases (`core/write-watch.ts`); `workspaceDb` hands out watched databases. */
  writes: WriteWatch;
  /** Each site's public content generation, moved by the writes themselves (`core/public-generation.ts`). */
  publicGeneration: PublicGeneration;
  /** Which cluster each workspace database is on, and one client per cluster (`core/placement.ts`). */
  placement: Placement;
  /** The one way to a workspace database: routed to its cluster at every call (docs/placement.md). */
  workspaceDb(workspace: PlacedWorkspace): Db;
}

/** Every process-wide member: `CoreServices` plus what `services/members.ts` declares. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- extended by declaration merging
export interface Services extends CoreServices {}

/** Facts about the caller's request that operations may need (audit, IP rules), never the HTTP objects. */
export interface RequestFacts {
  id: string;
  /** When the request arrived (epoch ms): a missing engine is waited for ENGINE_WAIT_MS from here (core/engines.ts). */
  receivedAt?: number;
  ip: string;
  origin?: string;
  userAgent?: string;
  /** Conditional and partial GET headers, for operations that answer a file (static export download). */
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
}

/**
 * What an operation asks its surface to do besides answering: start or end the caller's session.
 * The admin surface renders it as a cookie; handlers never see cookies.
 */
export interface OperationEffects {
  session?: { token: string; expiresAt: Date } | 'end';
}

/** What every handler receives: the site it acts on, that site's workspace database, and who asks. */
export interface OperationContext {
  services: Services;
  workspace: Workspace;
  site: Site;
  db: Db;
  principal: Principal;
  request: RequestFacts;
  emit(event: string, data: Record<string, unknown>): Promise<void>;
  effects: OperationEffects;
  /** The caller's key scope over the fields the running operation declared (`core/scope.ts`). */
  scope: ScopeGuard;
  /** Notes for the audit row of the operation the runner is running (`services/audit/record.ts`). */
  changes?: ChangeNotes;
}

export function createContext(services: Services, scope: { workspace: Workspace; site: Site }, principal: Principal, request: RequestFacts): OperationContext {
  const ctx: OperationContext = {
    services,
    workspace: scope.workspace,
    site: scope.site,
    // Writes to public collections through this handle move the site's public generation.
    db: services.publicGeneration.follow(services.workspaceDb(scope.workspace), scope.site._id),
    principal,
    request,
    effects: {},
    scope: contextScope(principal),
    emit: (event, data) => services.events.publish(ctx, event, data),
  };
  return ctx;
}
