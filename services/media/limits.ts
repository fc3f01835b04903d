import type { OperationContext } from '../core/context.ts';

/**
 * Media limits, read from the site's and the workspace's `quotas` (set by platform operators
 * through `PUT /sites/{id}/quotas` and `PUT /tenants/{id}/quotas`). A key that is absent takes
 * the default below; a key set to null or '' means "no limit" (contract 2.4).
 */
export const MEDIA_QUOTA_KEYS = {
  maxFileBytes: 'mediaMaxFileBytes',
  libraryBytes: 'mediaLibraryBytes',
  allowedTypes: 'mediaAllowedTypes',
} as const;

export const MEDIA_DEFAULTS = {
  /** Per file. Large enough for short videos; the bench uploads 200 MB. */
  maxFileBytes: 256 * 1024 * 1024,
  /** Per site, counting trashed items until they are purged. The workspace has no default cap. */
  siteLibraryBytes: 10 * 1024 * 1024 * 1024,
  /**
   * Detected MIME types accepted by default. No SVG or HTML (script in a same-origin document),
   * no executables or archives. A site may replace the list; `image/*` style wildcards work.
   */
  allowedTypes: [
    'image/jpeg',
    'image/png',
    'image/gif',
    'image/webp',
    'image/avif',
    'image/heic',
    'image/tiff',
    'image/bmp',
    'application/pdf',
    'video/mp4',
    'video/webm',
    'video/quicktime',
    'audio/mpeg',
    'audio/ogg',
    'audio/wav',
    'audio/x-wav',
    'audio/mp4',
    'audio/aac',
    'audio/flac',
    'audio/x-flac',
    'font/woff',
    'font/woff2',
  ],
} as const;

type Limit = number | null;

/** undefined: not set here; null: explicitly unlimited; number: the limit. */
function readLimit(quotas: Record<string, unknown>, key: string): Limit | undefined {
  if (!(key in quotas)) return undefined;
  const value = quotas[key];
  if (value === null || value === '') return null;
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number === 'number' && Number.isFinite(number) && number >= 0) return Math.floor(number);
  return undefined;
}

/** The tighter of two limits, where null means none. */
function tighter(a: Limit, b: Limit): Limit {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

export interface MediaLimits {
  maxFileBytes: Limit;
  siteLibraryBytes: Limit;
  workspaceLibraryBytes: Limit;
  allowedTypes: readonly string[];
}

export function mediaLimits(ctx: Pick<OperationContext, 'site' | 'workspace'>): MediaLimits {
  const site = ctx.site.quotas ?? {};
  const workspace = ctx.workspace.quotas ?? {};
  const siteMax = readLimit(site, MEDIA_QUOTA_KEYS.maxFileBytes);
  const workspaceMax = readLimit(workspace, MEDIA_QUOTA_KEYS.maxFileBytes);
  const maxFileBytes =
    siteMax === undefined && workspaceMax === undefined
      ? MEDIA_DEFAULTS.maxFileBytes
      : tighter(siteMax ?? null, workspaceMax ?? null);
  const siteLibrary = readLimit(site, MEDIA_QUOTA_KEYS.libraryBytes);
  const types = site[MEDIA_QUOTA_KEYS.allowedTypes] ?? workspace[MEDIA_QUOTA_KEYS.allowedTypes];
  return {
    maxFileBytes,
    siteLibraryBytes: siteLibrary === undefined ? MEDIA_DEFAULTS.siteLibraryBytes : siteLibrary,
    workspaceLibraryBytes: readLimit(workspace, MEDIA_QUOTA_KEYS.libraryBytes) ?? null,
    allowedTypes:
      Array.isArray(types) && types.every((t) => typeof t === 'string') ? (types as string[]) : MEDIA_DEFAULTS.allowedTypes,
  };
}

export function typeAllowed(mimeType: string, allowed: readonly string[]): boolean {
  return allowed.some((pattern) =>
    pattern.endsWith('/*') ? mimeType.startsWith(pattern.slice(0, -1)) : pattern === mimeType,
  );
}
