import type { Db } from 'mongodb';
import { siteStateCollection, siteStateId } from '../core/site-state.ts';

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

/**
 * The allow-listed local theme catalog (docs/plugins.md "Catalog"): themes shipped with the service
 * that a site installs before it can activate them. Nothing outside these two lists can be used.
 */
export const catalogThemes: readonly ThemeDefinition[] = [
  {
    id: 'journal',
    name: 'Journal',
    version: '1.0.0',
    description: 'Wide serif headings, a narrow reading column and a ruled sidebar.',
    stylesheet:
      'body{font-family:Charter,Georgia,serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.7;color:#1d1d1d}h1,h2{font-weight:400;letter-spacing:.01em}aside{border-top:1px solid #ccc;margin-top:2rem}a{color:#8a2d1c}',
  },
];

export const findTheme = (id: string) => builtinThemes.find((t) => t.id === id) ?? catalogThemes.find((t) => t.id === id);
export const isCatalogTheme = (id: string) => catalogThemes.some((t) => t.id === id);

/** One row per site: `_id` is `theme:<siteId>` (`site_state`). `installed` lists the catalog themes the site installed. */
interface ThemeStateDoc {
  _id: string;
  siteId: string;
  themeId: string;
  activatedAt: Date;
  installed?: string[];
}

/** A theme the site may use: a built-in, or a catalog theme it installed. */
const usable = (doc: ThemeStateDoc | null, themeId: string) => !!findTheme(themeId) && (!isCatalogTheme(themeId) || !!doc?.installed?.includes(themeId));

const themeStates = (db: Db) => siteStateCollection<ThemeStateDoc>(db);
const themeStateId = (siteId: string) => siteStateId('theme', siteId);

export async function activeThemeId(db: Db, siteId: string): Promise<string> {
  const doc = await themeStates(db).findOne({ _id: themeStateId(siteId), siteId });
  return doc && usable(doc, doc.themeId) ? doc.themeId : DEFAULT_THEME_ID;
}

/** The active theme and the catalog themes the site installed. */
export async function themeState(db: Db, siteId: string): Promise<{ active: string; installed: Set<string> }> {
  const doc = await themeStates(db).findOne({ _id: themeStateId(siteId), siteId });
  return { active: doc && usable(doc, doc.themeId) ? doc.themeId : DEFAULT_THEME_ID, installed: new Set(doc?.installed ?? []) };
}

export async function activeTheme(db: Db, siteId: string): Promise<ThemeDefinition> {
  return findTheme(await activeThemeId(db, siteId)) ?? builtinThemes[0];
}

/**
 * Atomic switch; returns the theme that was active before, or null when a catalog theme is not
 * installed on the site (the filter names it, so an uninstall cannot slip in between).
 */
export async function switchTheme(db: Db, siteId: string, themeId: string, now: Date): Promise<string | null> {
  const catalog = isCatalogTheme(themeId);
  const before = await themeStates(db).findOneAndUpdate(
    catalog ? { _id: themeStateId(siteId), siteId, installed: themeId } : { _id: themeStateId(siteId), siteId },
    { $set: { themeId, activatedAt: now } },
    { upsert: !catalog, returnDocument: 'before' },
  );
  if (catalog && !before) return null;
  return before && usable(before, before.themeId) ? before.themeId : DEFAULT_THEME_ID;
}

/** Adds a catalog theme to the site's installed ones; `false` when it was there already. */
export async function installTheme(db: Db, siteId: string, themeId: string, now: Date): Promise<boolean> {
  try {
    const { matchedCount, upsertedCount } = await themeStates(db).updateOne(
      { _id: themeStateId(siteId), siteId, installed: { $ne: themeId } },
      { $addToSet: { installed: themeId }, $setOnInsert: { themeId: DEFAULT_THEME_ID, activatedAt: now } },
      { upsert: true },
    );
    return matchedCount + upsertedCount > 0;
  } catch (error) {
    // The row exists and already lists it: the upsert met the `_id`.
    if ((error as { code?: number }).code === 11000) return false;
    throw error;
  }
}

/** Removes a catalog theme that is not the active one: `removed`, `absent`, or `active` (refused). */
export async function uninstallTheme(db: Db, siteId: string, themeId: string): Promise<'removed' | 'absent' | 'active'> {
  const { modifiedCount } = await themeStates(db).updateOne(
    { _id: themeStateId(siteId), siteId, installed: themeId, themeId: { $ne: themeId } },
    { $pull: { installed: themeId } },
  );
  if (modifiedCount > 0) return 'removed';
  const doc = await themeStates(db).findOne({ _id: themeStateId(siteId), siteId });
  return doc?.installed?.includes(themeId) ? 'active' : 'absent';
}
