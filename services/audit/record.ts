import type { OperationContext } from '../core/context.ts';
import type { AuditChange } from '../core/audit-notes.ts';
import { isPlatformCapability, requiredCapabilities } from '../core/capabilities.ts';
import type { Operation } from '../core/operation.ts';
import {
  changeRow,
  cleanSummary,
  noteChange,
  operationSummary,
  operationTarget,
  platformAudit,
  PLATFORM_RETENTION_DAYS,
  targetKind,
  workspaceAudit,
  workspaceRetentionDays,
} from './rows.ts';

export type { AuditChange, AuditSummary, AuditTarget } from '../core/audit-notes.ts';

function logged(ctx: OperationContext, action: string, error: unknown): void {
  ctx.services.log.error({ action, requestId: ctx.request.id, err: error instanceof Error ? error.message : String(error) }, 'audit row not recorded');
}

/**
 * The audit API for changes (docs/audit.md; the write path and workflow activities call it). Inside
 * an operation the runner runs, the change only enriches that operation's one row; elsewhere (a
 * workflow, an activity: the system principal) it is a row of its own. Never throws, never waits.
 */
export function recordChange(ctx: OperationContext, change: AuditChange): void {
  try {
    if (ctx.changes) return noteChange(ctx.changes, change);
    const row = changeRow(ctx, {
      action: change.action,
      operation: null,
      target: change.target,
      summary: cleanSummary(change.summary),
      retentionDays: workspaceRetentionDays(ctx),
    });
    ctx.services.audit.add(workspaceAudit(ctx.db), row);
  } catch (error) {
    logged(ctx, change.action, error);
  }
}

/** Operations that leave a row when they succeed: every change of a signed-in caller (not a GET, not the anonymous surfaces). */
export const audited = (operation: Operation): boolean =>
  operation.method !== 'GET' && operation.audit !== false && operation.surface !== 'public' && operation.surface !== 'comments';

/** An operator action (it needs a platform capability) is the platform's to list, not the workspace's. */
const isOperatorAction = (operation: Operation) => requiredCapabilities(operation.requires).some(isPlatformCapability);

/** The context an audited operation runs in: it collects what the handler reports (`recordChange`). */
export function withChangeNotes(ctx: OperationContext): OperationContext {
  return { ...ctx, changes: { noted: [], more: {} } };
}

/** The one row of a successful operation (the runner, services/http/run-operation.ts). */
export function recordOperation(ctx: OperationContext, operation: Operation, input: unknown, output: unknown): void {
  try {
    // A site's singletons (settings, permalinks, the widget layout) have no id of their own: the site's.
    const target = operationTarget(operation, input, output) ?? { kind: targetKind(operation), id: ctx.site._id };
    const summary = operationSummary(operation, input, output, target, ctx.changes ?? { noted: [], more: {} });
    const action = (operation.audit && operation.audit.action) || operation.id;
    const platform = isOperatorAction(operation);
    const row = changeRow(ctx, {
      action,
      operation: operation.id,
      target,
      summary,
      retentionDays: platform ? PLATFORM_RETENTION_DAYS : workspaceRetentionDays(ctx),
    });
    ctx.services.audit.add(platform ? platformAudit(ctx) : workspaceAudit(ctx.db), row);
  } catch (error) {
    logged(ctx, operation.id, error);
  }
}
