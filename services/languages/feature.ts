import type { Feature } from '../core/feature.ts';
import { addLanguageOp, deleteLanguageOp, getLanguageOp, listLanguagesOp, updateLanguageOp } from './languages-ops.ts';
import { LANGUAGES_PUBLIC, provisionLanguages } from './languages.ts';

/** Site languages; the Public API resolves `locale` against the active ones. */
export const languagesFeature: Feature = {
  name: 'languages',
  publicCollections: [LANGUAGES_PUBLIC],
  operations: [listLanguagesOp, getLanguageOp, addLanguageOp, updateLanguageOp, deleteLanguageOp],
  async provisionSite(ctx) {
    await provisionLanguages(ctx);
  },
};
