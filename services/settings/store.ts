import type { Db } from 'mongodb';
import { BadRequestError } from '../core/errors.ts';
import { settingsCollection, settingsId } from '../access/site-settings-store.ts';

/**
 * Applies a settings patch in one atomic update: objects merge key by key, `null` removes a key,
 * anything else replaces. The version is bumped too (the Public API switch lives here).
 */
export async function patchSettingsValues(db: Db, siteId: string, patch: Record<string, unknown>, now: Date): Promise<void> {
  const $set: Record<string, unknown> = { updatedAt: now };
  const $unset: Record<string, ''> = {};
  const walk = (value: Record<string, unknown>, path: string) => {
    for (const [key, child] of Object.entries(value)) {
      const at = `${path}.${key}`;
      if (child === null) $unset[at] = '';
      else if (typeof child === 'object' && !Array.isArray(child) && Object.keys(child).length > 0) walk(child as Record<string, unknown>, at);
      else $set[at] = child;
    }
  };
  walk(patch, 'values');
  const update: Record<string, unknown> = { $set, $inc: { accessVersion: 1 }, $setOnInsert: { siteId } };
  if (Object.keys($unset).length) update.$unset = $unset;
  try {
    await settingsCollection(db).updateOne({ _id: settingsId(siteId) }, update, { upsert: true });
  } catch (error) {
    // Merging an object under a setting that holds a scalar: the caller's mistake, nothing written.
    const { code, message } = error as { code?: number; message?: string };
    if (code === 28 || /cannot create field/i.test(message ?? '')) {
      throw new BadRequestError('settings: a patch object cannot merge into a setting that is not an object');
    }
    throw error;
  }
}
