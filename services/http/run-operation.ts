import type { OperationContext, RequestFacts, Services } from '../core/context.ts';
import { createContext } from '../core/context.ts';
import { AppError, QuotaExceededError, TooManyRequestsError, WorkspaceWritesHeldError, WorkspaceMovingError } from '../core/errors.ts';
import { isPlatformCapability, requiredCapabilities } from '../core/capabilities.ts';
import { invokeOperation, type Operation, type Surface } from '../core/operation.ts';
import type { AccessGate, Admitted, Credentials } from '../access/gate.ts';
import type { SiteScope } from '../tenancy/site-resolver.ts';
import { assertSwitch } from '../tenancy/quota-guard.ts';
import type { SwitchName } from '../tenancy/quota-model.ts';
import { audited, recordOperation, withChangeNotes } from '../audit/record.ts';

/** What a transport knows about one call before anything is checked. */
export interface Call {
  /** The surface whose door the caller comes through (MCP comes through `manage`'s). */
  surface: Surface;
  credentials: Credentials;
  scope: SiteScope;
  request: RequestFacts;
  /** A platform switch that closes this transport (MCP, GraphQL), checked after authentication. */
  transportSwitch?: SwitchName;
}

/** An operation's answer plus the headers the surface adds to the response (rate limits, cookies). */
export interface RunResult {
  value: unknown;
  headers: Record<string, string>;
}

/**
 * The one sequence every surface runs (REST, MCP, GraphQL): authenticate → build the context →
 * admit (capability, switches, limits) → invoke (input parsed, declared scope applied, output and
 * events checked in tests: core/operation.ts) → audit (one row per successful change, queued, never
 * awaited: services/audit/) → finish (session effects). A surface only maps its
 * transport to a `Call` and back. MCP and GraphQL open one context per HTTP request and run several
 * operations in it; REST runs one.
 */
export interface OperationRunner {
  open(call: Call): Promise<OperationContext>;
  run(ctx: OperationContext, operation: Operation, input: unknown): Promise<RunResult>;
  /** A call that is no operation (a plugin's own agent tool): admitted and counted like one, then run. */
  call(ctx: OperationContext, admitted: Admitted, run: () => Promise<unknown>): Promise<RunResult>;
}

/**
 * A change to the caller's own workspace: what a backup's write hold refuses. Platform operations
 * act on the platform database and other workspaces (cancelling the backup itself among them).
 */
const changesWorkspace = (operation: Operation) => operation.method !== 'GET' && !requiredCapabilities(operation.requires).some(isPlatformCapability);

/** A quota's or a rate limit's refusal counted on the metrics (by quota name, by surface); the error, unchanged. */
function counted(services: Services, surface: Surface, error: unknown): unknown {
  if (error instanceof QuotaExceededError) services.metrics.quotaRefusals.inc({ quota: error.quota });
  else if (error instanceof TooManyRequestsError) services.metrics.rateLimitRefusals.inc({ surface });
  return error;
}

export function createOperationRunner(services: Services, gate: AccessGate): OperationRunner {
  const { engines } = services;
  return {
    async open(call) {
      // The gate is the one place the site's API switches are read (Public API off → 404 on every
      // public route, Management API off → 403): no operation checks them again.
      const principal = await engines
        .bounded(() => gate.authenticate(call.surface, call.credentials, call.scope), call.request.receivedAt)
        .catch((error: unknown) => {
          throw engines.classify(error);
        });
      if (call.transportSwitch) assertSwitch(call.scope, call.transportSwitch);
      return createContext(services, call.scope, principal, call.request);
    },
    async run(ctx, operation, input) {
      const admitted = await engines
        .bounded(() => gate.admit(ctx, operation), ctx.request.receivedAt)
        .catch((error: unknown) => {
          throw counted(services, operation.surface, engines.classify(error));
        });
      let value: unknown;
      try {
        if (ctx.workspace.writeHold && changesWorkspace(operation)) throw new WorkspaceWritesHeldError();
        if (ctx.workspace.move?.state === 'switching' && changesWorkspace(operation)) throw new WorkspaceMovingError();
        // A missing engine is waited for ENGINE_WAIT_MS at most, then the call is a 503 (core/engines.ts).
        value = await engines.bounded(() => {
          if (!audited(operation)) return invokeOperation(operation, ctx, input);
          const changing = withChangeNotes(ctx);
          return invokeOperation(operation, changing, input, (parsed, result) => recordOperation(changing, operation, parsed, result));
        }, ctx.request.receivedAt);
      } catch (thrown) {
        const error = engines.classify(thrown);
        // A refusal still tells the caller where it stands with its limits.
        if (error instanceof AppError) for (const [name, v] of Object.entries(admitted)) error.headers[name] ??= v;
        throw counted(services, operation.surface, error);
      }
      const finished = gate.finish(ctx);
      return { value, headers: finished['set-cookie'] ? { ...admitted, ...finished } : admitted };
    },
    async call(ctx, admitted, run) {
      const headers = await gate.admit(ctx, admitted);
      return { value: await run(), headers };
    },
  };
}
