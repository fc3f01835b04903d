import type { OperationContext } from '../core/context.ts';
import { allowedMediaTypes, LIMIT_DEFAULTS, siteLimit, siteOwnLimit, workspaceLimit } from '../tenancy/quota-model.ts';

/**
 * Media limits: the platform quotas `mediaFileSize`, `mediaBytes` and `mediaTypes`
 * (services/tenancy/quota-model.ts, set through `PUT /sites/{id}/quotas` and
 * `PUT /tenants/{id}/quotas`). Absent takes the default below; null or '' means no limit.
 */
export const MEDIA_DEFAULTS = {
  /** Per file. Large enough for short videos; the bench uploads 200 MB. */
  maxFileBytes: LIMIT_DEFAULTS.site.mediaFileSize!,
  /** Per site, counting trashed items until they are purged. The workspace has no default cap. */
  siteLibraryBytes: LIMIT_DEFAULTS.site.mediaBytes!,
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

export interface MediaLimits {
  maxFileBytes: Limit;
  siteLibraryBytes: Limit;
  workspaceLibraryBytes: Limit;
  allowedTypes: readonly string[];
}

export function mediaLimits(ctx: Pick<OperationContext, 'site' | 'workspace'>): MediaLimits {
  const site = ctx.site.quotas;
  const workspace = ctx.workspace.quotas;
  return {
    maxFileBytes: siteLimit(workspace, site, 'mediaFileSize'),
    siteLibraryBytes: siteOwnLimit(site, 'mediaBytes'),
    workspaceLibraryBytes: workspaceLimit(workspace, 'mediaBytes'),
    allowedTypes: allowedMediaTypes(workspace, site) ?? MEDIA_DEFAULTS.allowedTypes,
  };
}

export function typeAllowed(mimeType: string, allowed: readonly string[]): boolean {
  return allowed.some((pattern) => (pattern.endsWith('/*') ? mimeType.startsWith(pattern.slice(0, -1)) : pattern === mimeType));
}
