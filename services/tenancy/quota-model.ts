import { z } from 'zod';
import { RetentionSettings, RetentionView } from './retention-model.ts';

/**
 * The typed set of workspace quotas and feature switches (issue 13), set by platform operators on
 * a workspace (`PUT /tenants/{id}/quotas`) and narrowed per site (`PUT /sites/{id}/quotas`).
 * An absent limit takes the default below (none for most); `null` (or `''`, contract 2.4) means
 * no limit. A switch is on unless set to `false` at the workspace or at the site. Docs:
 * docs/platform.md.
 */

/** Counted limits: `used` is a current count, a byte total, or a count in the current window. */
export const LIMIT_NAMES = [
  'sites',
  'users',
  'entries',
  'mediaBytes',
  'mediaFileSize',
  'apiKeys',
  'webhookEndpoints',
  'requestsPerMinute',
  'exportRunsPerDay',
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

export const SWITCH_NAMES = ['graphql', 'mcp', 'webhooks', 'staticExport', 'plugins', 'comments'] as const;
export type SwitchName = (typeof SWITCH_NAMES)[number];

/** Limits that only exist for the whole workspace (a site PUT naming them is a 400). */
export const WORKSPACE_ONLY: readonly LimitName[] = ['sites', 'requestsPerMinute'];

/** Defaults of limits that have one (media, contract 2.4); every other absent limit is none. */
export const LIMIT_DEFAULTS: { site: Partial<Record<LimitName, number>>; workspace: Partial<Record<LimitName, number>> } = {
  site: { mediaBytes: 10 * 1024 * 1024 * 1024, mediaFileSize: 256 * 1024 * 1024 },
  workspace: {},
};

const Limit = z.union([z.number().int().nonnegative(), z.null(), z.literal('').transform(() => null)]);
const MimePattern = z.string().regex(/^[a-z0-9][a-z0-9.+-]*\/(\*|[a-z0-9][a-z0-9.+-]*)$/, 'must be a MIME type or type/*');

const limitFields = Object.fromEntries(LIMIT_NAMES.map((name) => [name, Limit.optional()])) as Record<LimitName, z.ZodOptional<typeof Limit>>;
const switchFields = Object.fromEntries(SWITCH_NAMES.map((name) => [name, z.boolean().optional()])) as Record<SwitchName, z.ZodOptional<z.ZodBoolean>>;

/** Scheduled backups of a workspace (docs/backups.md): how often, and how many scheduled ones are kept. */
export const BackupSchedule = z.object({ every: z.enum(['daily', 'weekly']), keep: z.number().int().min(1).max(100) }).strict();

/** Workspace quotas: unknown names are a 400 (`strict`). */
export const WorkspaceQuotas = z
  .object({
    ...limitFields,
    mediaTypes: z.union([z.array(MimePattern).max(200), z.null()]).optional(),
    ...switchFields,
    backupSchedule: z.union([BackupSchedule, z.null()]).optional(),
    /** How long history and the trash are kept (retention-model.ts); null: the defaults. */
    retention: z.union([RetentionSettings, z.null()]).optional(),
  })
  .strict();
export type QuotaSet = z.output<typeof WorkspaceQuotas>;

/** Site quotas: the same set without the workspace-only limits. */
export const SiteQuotas = WorkspaceQuotas.omit({ sites: true, requestsPerMinute: true, backupSchedule: true, retention: true }).strict();

/**
 * What `GET /tenants/{id}/usage` and `GET /sites/{id}/usage` answer (a stable shape the operator
 * console draws bars from). `limit` is the effective one (a site's is the tighter of its own and
 * its workspace's; workspace-only limits show the workspace's), null meaning no limit. `used` is
 * null where a running figure makes no sense (`mediaFileSize`).
 */
export const QuotaFigure = z.object({ used: z.number().nullable(), limit: z.number().nullable() });
export const UsageView = z.object({
  scope: z.enum(['tenant', 'site']),
  tenantId: z.string(),
  siteId: z.string().nullable(),
  quotas: z.object(Object.fromEntries(LIMIT_NAMES.map((name) => [name, QuotaFigure])) as Record<LimitName, typeof QuotaFigure>),
  /** Allowed media types; null: the built-in default list (docs/media.md). */
  mediaTypes: z.array(z.string()).nullable(),
  switches: z.object(Object.fromEntries(SWITCH_NAMES.map((name) => [name, z.boolean()])) as Record<SwitchName, z.ZodBoolean>),
  retention: RetentionView,
});
export type Usage = z.infer<typeof UsageView>;

/** A stored quota set, read leniently: rows written before the typed set keep working. */
function stored(quotas: Record<string, unknown> | undefined): Record<string, unknown> {
  return quotas ?? {};
}

function readLimit(quotas: Record<string, unknown>, name: LimitName): number | null | undefined {
  if (!(name in quotas)) return undefined;
  const value = quotas[name];
  if (value === null || value === '') return null;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

const tighter = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** The workspace's own limit (its setting, else the workspace default, else none). */
export function workspaceLimit(workspaceQuotas: Record<string, unknown> | undefined, name: LimitName): number | null {
  const set = readLimit(stored(workspaceQuotas), name);
  return set === undefined ? (LIMIT_DEFAULTS.workspace[name] ?? null) : set;
}

/** A site's own limit (its setting or the site default), before the workspace's is applied. */
export function siteOwnLimit(siteQuotas: Record<string, unknown> | undefined, name: LimitName): number | null {
  if (WORKSPACE_ONLY.includes(name)) return null;
  const own = readLimit(stored(siteQuotas), name);
  return own === undefined ? (LIMIT_DEFAULTS.site[name] ?? null) : own;
}

/** A site's effective limit: the tighter of the site's own (or its default) and the workspace's. */
export function siteLimit(
  workspaceQuotas: Record<string, unknown> | undefined,
  siteQuotas: Record<string, unknown> | undefined,
  name: LimitName,
): number | null {
  const workspace = workspaceLimit(workspaceQuotas, name);
  if (WORKSPACE_ONLY.includes(name)) return workspace;
  return tighter(siteOwnLimit(siteQuotas, name), workspace);
}

export function switchOn(workspaceQuotas: Record<string, unknown> | undefined, siteQuotas: Record<string, unknown> | undefined, name: SwitchName): boolean {
  return stored(workspaceQuotas)[name] !== false && stored(siteQuotas)[name] !== false;
}

/** The allowed media types: the site's list, else the workspace's, else null (the default list). */
export function allowedMediaTypes(workspaceQuotas: Record<string, unknown> | undefined, siteQuotas: Record<string, unknown> | undefined): string[] | null {
  const pick = (value: unknown) => (Array.isArray(value) && value.every((t) => typeof t === 'string') ? (value as string[]) : null);
  return pick(stored(siteQuotas).mediaTypes) ?? pick(stored(workspaceQuotas).mediaTypes);
}
