import type { Collection, Db } from 'mongodb';
import type { OperationContext } from '../core/context.ts';
import type { AuditChange, AuditSummary, AuditTarget, ChangeNotes } from '../core/audit-notes.ts';
import { pathParamNames, type Operation } from '../core/operation.ts';
import { newId } from '../core/ids.ts';
import { auditRows, type AuditDoc } from './model.ts';

/** Days a workspace's change rows are kept unless its `auditRetentionDays` says otherwise. */
export const DEFAULT_RETENTION_DAYS = 90;
/** Days the platform's own rows (operator actions) are kept. */
export const PLATFORM_RETENTION_DAYS = 365;
export const RETENTION_LIMITS = { min: 1, max: 3650 } as const;
const DAY_MS = 24 * 60 * 60_000;

/**
 * Fields whose values (not only names) a row may show: states, roles, capabilities, quotas and
 * switches. Every other field is named only: bodies, titles, passwords and secrets never reach a row.
 */
const STATE_FIELDS = new Set([
  'api',
  'status',
  'role',
  'capabilities',
  'scope',
  'active',
  'enabled',
  'platformOperator',
  'quotas',
  'isDefault',
  'publishOn',
  'unpublishOn',
  'mode',
  'dropDatabase',
  'events',
  'publish',
  'days',
]);
/** Input fields that say how to run, not what changed. */
const NOT_CHANGES = new Set(['expectedVersion', 'cursor', 'limit']);
/** A shown value longer than this (as JSON) is replaced by a mark: rows stay small. */
const MAX_VALUE_CHARS = 300;
/** Changes a handler may report for one operation's row; later ones are only counted. */
const NOTES_KEPT = 20;

/** The collection an operation's row goes to: the platform's for operator actions, else the workspace's. */
export const platformAudit = (ctx: OperationContext): Collection<AuditDoc> => auditRows(ctx.services.platformDb);
export const workspaceAudit = (db: Db): Collection<AuditDoc> => auditRows(db);

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
const record = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function shown(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  const json = JSON.stringify(value);
  return json === undefined || json.length <= MAX_VALUE_CHARS ? value : '(large)';
}

/** A reported summary with every value outside the state-like fields dropped. */
export function cleanSummary(summary: AuditSummary | undefined): AuditSummary {
  const clean: AuditSummary = {};
  if (summary?.fields?.length) clean.fields = [...new Set(summary.fields)].slice(0, 50);
  const changes = Object.entries(summary?.changes ?? {}).filter(([field]) => STATE_FIELDS.has(field));
  if (changes.length)
    clean.changes = Object.fromEntries(
      changes.map(([field, { from, to }]) => [field, { ...(from !== undefined ? { from: shown(from) } : {}), ...(to !== undefined ? { to: shown(to) } : {}) }]),
    );
  if (summary?.note) clean.note = summary.note.slice(0, 200);
  if (summary?.affected && Object.keys(summary.affected).length) clean.affected = { ...summary.affected };
  return clean;
}

/** Default summary of an operation: the input fields it was given, values of the state-like ones. */
function inputSummary(operation: Operation, input: unknown): AuditSummary {
  if (!record(input)) return {};
  const params = new Set(pathParamNames(operation.path));
  const fields = Object.keys(input).filter((name) => !params.has(name) && !NOT_CHANGES.has(name) && input[name] !== undefined);
  const changes = Object.fromEntries(fields.filter((name) => STATE_FIELDS.has(name)).map((name) => [name, { to: input[name] }]));
  return { ...(fields.length ? { fields } : {}), ...(Object.keys(changes).length ? { changes } : {}) };
}

function merge(base: AuditSummary, over: AuditSummary): AuditSummary {
  const fields = [...(base.fields ?? []), ...(over.fields ?? [])];
  const affected = { ...base.affected };
  for (const [kind, n] of Object.entries(over.affected ?? {})) affected[kind] = (affected[kind] ?? 0) + n;
  return {
    ...(fields.length ? { fields } : {}),
    ...(base.changes || over.changes ? { changes: { ...base.changes, ...over.changes } } : {}),
    ...((over.note ?? base.note) ? { note: over.note ?? base.note } : {}),
    ...(Object.keys(affected).length ? { affected } : {}),
  };
}

function answerId(output: unknown): string | null {
  if (!record(output)) return null;
  const own = text(output.id);
  if (own) return own;
  for (const value of Object.values(output)) if (record(value) && text(value.id)) return value.id as string;
  return null;
}

/** The declared target kind, else the operation id's first word (`content.update` → `content`). */
export const targetKind = (operation: Operation): string =>
  (operation.audit && operation.audit.kind) || operation.id.replace(/^(console|admin)\./, '').split('.')[0];

/**
 * The thing an operation changed: what its definition says, else by default the path's own
 * parameter (`/content/:id`), else the answer's id (a creation, `/content/:id/publish`), else the
 * input's `id`, else any path parameter (`/taxonomies/:slug/terms`).
 */
export function operationTarget(operation: Operation, input: unknown, output: unknown): AuditTarget | null {
  const declared = operation.audit || {};
  if (declared.target) return declared.target(input, output);
  const kind = targetKind(operation);
  const fields = record(input) ? input : {};
  const params = pathParamNames(operation.path);
  const endsWithParam = /\/:[A-Za-z0-9_]+$/.test(operation.path);
  const id =
    (endsWithParam ? text(fields[params[params.length - 1]]) : null) ??
    answerId(output) ??
    text(fields.id) ??
    params.map((name) => text(fields[name])).find(Boolean) ??
    null;
  return id ? { kind, id } : null;
}

/** A row of the trail: who (from the principal), where, what, when, and the request. */
export function changeRow(
  ctx: OperationContext,
  fields: { action: string; operation: string | null; target: AuditTarget | null; summary: AuditSummary; retentionDays: number },
): AuditDoc {
  const at = ctx.services.clock.now();
  const { principal } = ctx;
  return {
    _id: newId(at.getTime()),
    siteId: ctx.site._id,
    workspaceId: ctx.workspace._id,
    at,
    action: fields.action,
    operation: fields.operation,
    userId: principal.kind === 'user' || principal.kind === 'key' ? principal.userId : null,
    keyId: principal.kind === 'key' ? principal.keyId : null,
    system: principal.kind === 'system' ? principal.reason : null,
    ip: ctx.request.ip,
    reason: null,
    target: fields.target,
    summary: Object.keys(fields.summary).length ? fields.summary : null,
    requestId: ctx.request.id,
    expiresAt: new Date(at.getTime() + fields.retentionDays * DAY_MS),
  };
}

export const workspaceRetentionDays = (ctx: OperationContext) => ctx.workspace.auditRetentionDays ?? DEFAULT_RETENTION_DAYS;

/** Keeps a change reported during an operation for that operation's row (`recordChange`). */
export function noteChange(notes: ChangeNotes, change: AuditChange): void {
  if (notes.noted.length < NOTES_KEPT) notes.noted.push(change);
  else notes.more[change.target.kind] = (notes.more[change.target.kind] ?? 0) + 1;
}

/**
 * The summary of an operation's row: its input's, its definition's, then what the handler reported
 * of the same target (old → new values); reports about other things only counted per kind.
 */
export function operationSummary(operation: Operation, input: unknown, output: unknown, target: AuditTarget | null, notes: ChangeNotes): AuditSummary {
  let summary = inputSummary(operation, input);
  if (operation.audit && operation.audit.summary) summary = merge(summary, operation.audit.summary(input, output));
  const affected: Record<string, number> = { ...notes.more };
  for (const change of notes.noted) {
    if (!target || (change.target.kind === target.kind && change.target.id === target.id) || change.target.id === target.id)
      summary = merge(summary, change.summary ?? {});
    else affected[change.target.kind] = (affected[change.target.kind] ?? 0) + 1;
  }
  return cleanSummary(merge(summary, { affected }));
}
