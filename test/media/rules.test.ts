import { describe, expect, it } from 'vitest';
import { parseRange } from '../../services/media/range.ts';
import { MEDIA_DEFAULTS, mediaLimits, typeAllowed } from '../../services/media/limits.ts';
import type { Site, Workspace } from '../../services/core/tenants.ts';

describe('parseRange', () => {
  it.each([
    [undefined, null],
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=90-', { start: 90, end: 99 }],
    ['bytes=-5', { start: 95, end: 99 }],
    ['bytes=-500', { start: 0, end: 99 }],
    ['bytes=50-5000', { start: 50, end: 99 }],
    ['bytes=100-', 'unsatisfiable'],
    ['bytes=-0', 'unsatisfiable'],
    ['bytes=9-3', null],
    ['bytes=0-1,4-5', null],
    ['items=0-1', null],
    ['bytes=-', null],
  ])('%s of 100 bytes → %j', (header, expected) => {
    expect(parseRange(header, 100)).toEqual(expected);
  });
});

describe('mediaLimits', () => {
  const scope = (site: Record<string, unknown>, workspace: Record<string, unknown> = {}) => ({
    site: { quotas: site } as unknown as Site,
    workspace: { quotas: workspace } as unknown as Workspace,
  });

  it('uses the documented defaults when nothing is set', () => {
    expect(mediaLimits(scope({}))).toEqual({
      maxFileBytes: MEDIA_DEFAULTS.maxFileBytes,
      siteLibraryBytes: MEDIA_DEFAULTS.siteLibraryBytes,
      workspaceLibraryBytes: null,
      allowedTypes: MEDIA_DEFAULTS.allowedTypes,
    });
  });

  it('treats null and empty string as "no limit", and takes the tighter file limit', () => {
    expect(mediaLimits(scope({ mediaFileSize: null, mediaBytes: '' })).maxFileBytes).toBeNull();
    expect(mediaLimits(scope({ mediaBytes: '' })).siteLibraryBytes).toBeNull();
    expect(mediaLimits(scope({ mediaFileSize: 500 }, { mediaFileSize: 300 })).maxFileBytes).toBe(300);
    expect(mediaLimits(scope({ mediaFileSize: null }, { mediaFileSize: 300 })).maxFileBytes).toBe(300);
    expect(mediaLimits(scope({}, { mediaBytes: 1000 })).workspaceLibraryBytes).toBe(1000);
  });

  it('takes the site’s allowed types, with wildcards', () => {
    const { allowedTypes } = mediaLimits(scope({ mediaTypes: ['image/*'] }, { mediaTypes: ['application/pdf'] }));
    expect(typeAllowed('image/webp', allowedTypes)).toBe(true);
    expect(typeAllowed('application/pdf', allowedTypes)).toBe(false);
    expect(typeAllowed('image/svg+xml', MEDIA_DEFAULTS.allowedTypes)).toBe(false);
  });
});
