import { z } from 'zod';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError } from '../core/errors.ts';
import { deleteDesign, readDesign, writeDesign, type DesignDoc } from './store.ts';

/** Customizer values are flat settings (`colors.primary`, `logo`, `layout.width`) of simple types. */
const SettingKey = z.string().regex(/^[a-z][a-zA-Z0-9_-]*(?:\.[a-zA-Z0-9_-]+){0,3}$/, 'a setting name like colors.primary');
const SettingValue = z.union([z.string().max(2000), z.number(), z.boolean()]);
const Values = z.record(z.string(), SettingValue);
type Values = z.infer<typeof Values>;

const MAX_SETTINGS = 200;
const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

interface CustomizerValue {
  published: Values;
  draft: Values | null;
}

const View = z.object({ published: Values, draft: Values.nullable(), updatedAt: z.string().nullable() });

const toView = (doc: DesignDoc<CustomizerValue> | null) => ({
  published: doc?.value.published ?? {},
  draft: doc?.value.draft ?? null,
  updatedAt: doc ? doc.updatedAt.toISOString() : null,
});

export const getCustomizerOp = defineOperation({
  id: 'customizer.get',
  surface: 'manage',
  method: 'GET',
  path: '/themes/customize',
  summary: 'Customizer values: what visitors see and the unpublished draft',
  requires: 'content:read',
  scope: 'none',
  input: z.object({}),
  output: View,
  async handler(ctx) {
    return toView(await readDesign<CustomizerValue>(ctx, 'customizer', 'active'));
  },
});

export const patchCustomizerOp = defineOperation({
  id: 'customizer.patch',
  surface: 'manage',
  method: 'PATCH',
  path: '/themes/customize',
  summary: 'Change draft values (null removes one); `publish: true` publishes the draft',
  description: 'A setting whose name ends in `color` (any case) must be a hex colour.',
  requires: 'settings:manage',
  input: z.object({ values: z.record(SettingKey, SettingValue.nullable()).default({}), publish: z.boolean().default(false) }),
  output: View,
  async handler(ctx, { values, publish }) {
    for (const [key, value] of Object.entries(values)) {
      if (/color$/i.test(key) && value !== null && !(typeof value === 'string' && COLOR.test(value)))
        throw new BadRequestError(`values.${key}: a hex colour like #1a2b3c`);
    }
    const current = (await readDesign<CustomizerValue>(ctx, 'customizer', 'active'))?.value ?? { published: {}, draft: null };
    const draft: Values = { ...(current.draft ?? current.published) };
    for (const [key, value] of Object.entries(values)) {
      if (value === null) delete draft[key];
      else draft[key] = value;
    }
    if (Object.keys(draft).length > MAX_SETTINGS) throw new BadRequestError(`values: at most ${MAX_SETTINGS} settings`);
    const next: CustomizerValue = publish ? { published: draft, draft: null } : { published: current.published, draft };
    return toView(await writeDesign(ctx, 'customizer', 'active', next));
  },
});

export const discardCustomizerOp = defineOperation({
  id: 'customizer.discard',
  surface: 'manage',
  method: 'DELETE',
  path: '/themes/customize',
  summary: 'Discard the draft (`?reset=true` also clears the published values)',
  requires: 'settings:manage',
  input: z.object({ reset: z.enum(['true', 'false']).default('false') }),
  output: View,
  async handler(ctx, { reset }) {
    const current = await readDesign<CustomizerValue>(ctx, 'customizer', 'active');
    if (reset === 'true' || !current) {
      await deleteDesign(ctx, 'customizer', 'active');
      return toView(null);
    }
    return toView(await writeDesign(ctx, 'customizer', 'active', { published: current.value.published, draft: null }));
  },
});

export const customizerOperations = [getCustomizerOp, patchCustomizerOp, discardCustomizerOp];
