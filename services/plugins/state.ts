import type { Db } from 'mongodb';

/** One row per (site, plugin) the site has ever activated; `_id` is `<siteId>:<pluginId>`. */
export interface PluginStateDoc {
  _id: string;
  siteId: string;
  pluginId: string;
  active: boolean;
  /** The plugin version that was last activated. */
  version: string;
  installedAt: Date;
  activatedAt: Date | null;
  deactivatedAt: Date | null;
  updatedAt: Date;
}

export const PLUGINS_COLLECTION = 'plugins';

export const pluginStates = (db: Db) => db.collection<PluginStateDoc>(PLUGINS_COLLECTION);

const stateId = (siteId: string, pluginId: string) => `${siteId}:${pluginId}`;

export async function readPluginStates(db: Db, siteId: string): Promise<Map<string, PluginStateDoc>> {
  const rows = await pluginStates(db).find({ siteId }).toArray();
  return new Map(rows.map((row) => [row.pluginId, row]));
}

export async function readPluginState(db: Db, siteId: string, pluginId: string): Promise<PluginStateDoc | null> {
  return pluginStates(db).findOne({ _id: stateId(siteId, pluginId), siteId });
}

export async function activePluginIds(db: Db, siteId: string): Promise<Set<string>> {
  const rows = await pluginStates(db)
    .find({ siteId, active: true }, { projection: { pluginId: 1 } })
    .toArray();
  return new Set(rows.map((row) => row.pluginId));
}

/**
 * Marks the plugin active (one atomic upsert). `installed` is true when this is the first time the
 * site has the plugin. A retried activity finds it active already (the filter misses, the upsert
 * hits the `_id` and fails as a duplicate) and changes nothing.
 */
export async function markActive(db: Db, siteId: string, pluginId: string, version: string, now: Date): Promise<{ installed: boolean; changed: boolean }> {
  try {
    const before = await pluginStates(db).findOneAndUpdate(
      { _id: stateId(siteId, pluginId), siteId, active: { $ne: true } },
      {
        $set: { active: true, version, activatedAt: now, updatedAt: now },
        $setOnInsert: { pluginId, installedAt: now, deactivatedAt: null },
      },
      { upsert: true, returnDocument: 'before' },
    );
    return { installed: !before, changed: true };
  } catch (error) {
    if ((error as { code?: number }).code === 11000) return { installed: false, changed: false };
    throw error;
  }
}

export async function markInactive(db: Db, siteId: string, pluginId: string, now: Date): Promise<{ changed: boolean }> {
  const before = await pluginStates(db).findOneAndUpdate(
    { _id: stateId(siteId, pluginId), siteId, active: true },
    { $set: { active: false, deactivatedAt: now, updatedAt: now } },
    { returnDocument: 'before' },
  );
  return { changed: !!before };
}

/**
 * Installs a catalog plugin on a site: its row, inactive. `false` when the site has it already
 * (the insert meets the `_id`), so a repeated install changes nothing.
 */
export async function markInstalled(db: Db, siteId: string, pluginId: string, version: string, now: Date): Promise<boolean> {
  try {
    await pluginStates(db).insertOne({
      _id: stateId(siteId, pluginId),
      siteId,
      pluginId,
      active: false,
      version,
      installedAt: now,
      activatedAt: null,
      deactivatedAt: null,
      updatedAt: now,
    });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 11000) return false;
    throw error;
  }
}

/** Removes an inactive plugin's row (uninstall); `false` when there is no inactive row to remove. */
export async function markUninstalled(db: Db, siteId: string, pluginId: string): Promise<boolean> {
  const { deletedCount } = await pluginStates(db).deleteOne({ _id: stateId(siteId, pluginId), siteId, active: false });
  return deletedCount > 0;
}
