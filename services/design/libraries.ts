import { z } from 'zod';
import { BlockDocumentInput, BlockDocumentSchema } from '../content/model.ts';
import { SlugSchema } from '../content/entry-input.ts';
import { libraryOperations } from './library-ops.ts';

/** Block patterns: named block layouts editors insert and adapt; import/export as JSON. */
export const patternOperations = libraryOperations({
  kind: 'pattern',
  path: '/patterns',
  idPrefix: 'patterns',
  noun: 'pattern',
  keyField: 'slug',
  key: SlugSchema,
  item: z.object({
    title: z.string().trim().min(1).max(200),
    category: z.string().trim().max(100).default('uncategorized'),
    description: z.string().trim().max(1000).default(''),
    blocks: BlockDocumentInput,
  }),
  view: z.object({ title: z.string(), category: z.string(), description: z.string(), blocks: BlockDocumentSchema }),
  maxItems: 500,
});

/** Reusable blocks: one shared copy used in many entries (editing it changes every use). */
export const reusableBlockOperations = libraryOperations({
  kind: 'reusable-block',
  path: '/reusable-blocks',
  idPrefix: 'reusableBlocks',
  noun: 'reusable block',
  keyField: 'slug',
  key: SlugSchema,
  item: z.object({ title: z.string().trim().min(1).max(200), blocks: BlockDocumentInput }),
  view: z.object({ title: z.string(), blocks: BlockDocumentSchema }),
  maxItems: 1000,
});

/** Custom error pages by HTTP status; a code without one falls back to the theme's page. */
export const ERROR_PAGE_CODES = ['401', '403', '404', '410', '429', '500', '503'] as const;
export const errorPageOperations = libraryOperations({
  kind: 'error-page',
  path: '/error-pages',
  idPrefix: 'errorPages',
  noun: 'error page',
  keyField: 'code',
  key: z.coerce.string().pipe(z.enum(ERROR_PAGE_CODES)),
  item: z.object({ title: z.string().trim().min(1).max(200), blocks: BlockDocumentInput }),
  view: z.object({ title: z.string(), blocks: BlockDocumentSchema }),
  maxItems: ERROR_PAGE_CODES.length,
});
