import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation } from '../core/operation.ts';
import { BadRequestError, ConflictError } from '../core/errors.ts';
import { findLanguage, loadLanguages, LocaleCodeSchema, updateLanguages, type LanguagesDoc } from './languages.ts';

const LanguageView = z.object({
  id: z.string(),
  code: z.string(),
  name: z.string(),
  active: z.boolean(),
  isDefault: z.boolean(),
  position: z.number().int(),
});

const view = (doc: LanguagesDoc) =>
  doc.languages.map((l, position) => ({ id: l.code, code: l.code, name: l.name, active: l.active, isDefault: l.code === doc.defaultCode, position }));

export const listLanguagesOp = defineOperation({
  id: 'languages.list',
  surface: 'manage',
  method: 'GET',
  path: '/languages',
  summary: 'Site languages in order, with the default',
  requires: 'settings:read',
  input: ListQuery,
  output: pageEnvelope(LanguageView),
  async handler(ctx, query) {
    const { items, page } = pageInOrder(ctx, 'languages', view(await loadLanguages(ctx)), (language) => language.code, query);
    return { data: items, page };
  },
});

export const getLanguageOp = defineOperation({
  id: 'languages.get',
  surface: 'manage',
  method: 'GET',
  path: '/languages/:id',
  summary: 'One language (the id is its code)',
  requires: 'settings:read',
  input: z.object({ id: z.string() }),
  output: LanguageView,
  async handler(ctx, { id }) {
    const doc = await loadLanguages(ctx);
    findLanguage(doc, id);
    return view(doc).find((l) => l.code === id)!;
  },
});

export const addLanguageOp = defineOperation({
  id: 'languages.create',
  surface: 'manage',
  method: 'POST',
  path: '/languages',
  summary: 'Add a language (appended at the end)',
  requires: 'settings:manage',
  errors: [409],
  status: 201,
  input: z.object({ code: LocaleCodeSchema, name: z.string().min(1).max(100), active: z.boolean().default(true) }),
  output: LanguageView,
  async handler(ctx, input) {
    const doc = await updateLanguages(ctx, (current) => {
      if (current.languages.some((l) => l.code.toLowerCase() === input.code.toLowerCase())) {
        throw new ConflictError('This language exists');
      }
      return { languages: [...current.languages, input], defaultCode: current.defaultCode };
    });
    return view(doc).find((l) => l.code === input.code)!;
  },
});

export const updateLanguageOp = defineOperation({
  id: 'languages.update',
  surface: 'manage',
  method: 'PATCH',
  path: '/languages/:id',
  summary: 'Rename, activate or deactivate, move (position) or make default',
  requires: 'settings:manage',
  errors: [409],
  input: z.object({
    id: z.string(),
    name: z.string().min(1).max(100).optional(),
    active: z.boolean().optional(),
    position: z.number().int().min(0).optional(),
    isDefault: z.literal(true).optional().describe('Make this the default language (it must be active)'),
  }),
  output: LanguageView,
  async handler(ctx, { id, name, active, position, isDefault }) {
    const doc = await updateLanguages(ctx, (current) => {
      const language = findLanguage(current, id);
      if (name !== undefined) language.name = name;
      if (active !== undefined) language.active = active;
      let languages = current.languages;
      if (position !== undefined) {
        languages = languages.filter((l) => l.code !== id);
        languages.splice(Math.min(position, languages.length), 0, language);
      }
      return { languages, defaultCode: isDefault ? id : current.defaultCode };
    });
    return view(doc).find((l) => l.code === id)!;
  },
});

export const deleteLanguageOp = defineOperation({
  id: 'languages.delete',
  surface: 'manage',
  method: 'DELETE',
  path: '/languages/:id',
  summary: 'Remove a language (not the default); its entries stay',
  requires: 'settings:manage',
  errors: [409],
  input: z.object({ id: z.string() }),
  output: z.object({ deleted: z.boolean() }),
  async handler(ctx, { id }) {
    await updateLanguages(ctx, (current) => {
      findLanguage(current, id);
      if (current.defaultCode === id) throw new BadRequestError('The default language cannot be removed');
      return { languages: current.languages.filter((l) => l.code !== id), defaultCode: current.defaultCode };
    });
    return { deleted: true };
  },
});
