import type { Db } from 'mongodb';

/**
 * A theme is data: how the static export (and a frontend that asks) presents the site. Built in,
 * like plugins; a site picks one. `stylesheet` is inlined into every exported page.
 */
export interface ThemeDefinition {
  id: string;
  name: string;
  version: string;
  description: string;
  stylesheet: string;
}

export const DEFAULT_THEME_ID = 'classic';

export const builtinThemes: readonly ThemeDefinition[] = [
  {
    id: 'classic',
    name: 'Classic',
    version: '1.0.0',
    description: 'Serif body text on a centred column.',
    stylesheet: 'body{font-family:Georgia,serif;max-width:42rem;margin:2rem auto;padding:0 1rem;line-height:1.6;color:#222}a{color:#1a4d8f}',
  },
  {
    id: 'minimal',
    name: 'Minimal',
    version: '1.0.0',
    description: 'System sans-serif, no decoration.',
    stylesheet: 'body{font-family:system-ui,sans-serif;max-width:40rem;margin:1rem auto;padding:0 1rem;line-height:1.5}a{color:inherit}',
  },
];

export const findTheme = (id: string) => builtinThemes.find((t) => t.id === id);

/** One row per site: `_id` is the site id. */
interface ThemeStateDoc {
  _id: string;
  siteId: string;
  themeId: string;
  activatedAt: Date;
}

const themeStates = (db: Db) => db.collection<ThemeStateDoc>('site_theme');

export async function activeThemeId(db: Db, siteId: string): Promise<string> {
  const doc = await themeStates(db).findOne({ _id: siteId, siteId });
  return doc && findTheme(doc.themeId) ? doc.themeId : DEFAULT_THEME_ID;
}

export async function activeTheme(db: Db, siteId: string): Promise<ThemeDefinition> {
  return findTheme(await activeThemeId(db, siteId)) ?? builtinThemes[0];
}

/** Atomic switch; returns the theme that was active before. */
export async function switchTheme(db: Db, siteId: string, themeId: string, now: Date): Promise<string> {
  const before = await themeStates(db).findOneAndUpdate(
    { _id: siteId, siteId },
    { $set: { themeId, activatedAt: now } },
    { upsert: true, returnDocument: 'before' },
  );
  return before && findTheme(before.themeId) ? before.themeId : DEFAULT_THEME_ID;
}
