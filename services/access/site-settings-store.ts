import type { Db } from 'mongodb';
import { siteStateCollection, siteStateId } from '../core/site-state.ts';

/** The site's settings document in `site_state` (core/site-state.ts). */
export const settingsId = (siteId: string) => siteStateId('settings', siteId);

/** Global key settings (contract 4.4): the Management API switch, default rate limit, allowed origins. */
export interface KeySettings {
  enabled: boolean;
  defaultRateLimitPerMin: number;
  allowedOrigins: string[];
}

/**
 * One document per site (`_id` = `settings:<siteId>`, in `site_state`) holding the free-form settings, the key settings and
 * `accessVersion`, a counter bumped by every change that can alter who gets in (keys, users, roles,
 * switches). Gateways read this one small document per request: switches take effect on the next
 * request, and cached keys/users stay valid exactly while the version is unchanged.
 */
export interface SiteSettingsDoc {
  _id: string;
  siteId: string;
  values: Record<string, unknown>;
  apiKeys: KeySettings;
  accessVersion: number;
  updatedAt: Date;
  /**
   * Per-minute rate counters of known keys, `rl.w<windowStart>.k<keyId>` (see countAndReadAccessState):
   * one field per key in use, never one per client address (those are documents of their own,
   * live-state.ts), so no caller can grow this document.
   */
  rl?: Record<string, Record<string, number>>;
}

export const DEFAULT_KEY_SETTINGS: KeySettings = { enabled: false, defaultRateLimitPerMin: 120, allowedOrigins: [] };

/** What the gate needs on every request. */
export interface AccessState {
  version: number;
  keys: KeySettings;
  publicEnabled: boolean;
  /** The comment submission API (`/api/comments/v1`); on unless `api.commentsEnabled` is false. */
  commentsEnabled: boolean;
  /** Every user must sign in with a second factor (`accounts.twoFactor: "required"`, docs/accounts.md). */
  twoFactorRequired: boolean;
}

export const settingsCollection = (db: Db) => siteStateCollection<SiteSettingsDoc>(db);

export async function ensureSiteSettings(db: Db, siteId: string, now: Date): Promise<void> {
  await settingsCollection(db).updateOne(
    { _id: settingsId(siteId) },
    {
      $setOnInsert: {
        siteId,
        values: { api: { publicEnabled: true } },
        apiKeys: DEFAULT_KEY_SETTINGS,
        accessVersion: 1,
        updatedAt: now,
      },
    },
    { upsert: true },
  );
}

export async function readAccessState(db: Db, siteId: string): Promise<AccessState> {
  return toAccessState(await settingsCollection(db).findOne({ _id: settingsId(siteId) }, { projection: STATE_PROJECTION }));
}

/** Call after any write that changes access (a key, a user, a role, a switch). */
export async function bumpAccessVersion(db: Db, siteId: string): Promise<void> {
  await settingsCollection(db).updateOne({ _id: settingsId(siteId) }, { $inc: { accessVersion: 1 }, $setOnInsert: { siteId } }, { upsert: true });
}

export async function readSettingsDoc(db: Db, siteId: string): Promise<SiteSettingsDoc | null> {
  return settingsCollection(db).findOne({ _id: settingsId(siteId) }, { projection: { rl: 0 } });
}

const STATE_PROJECTION = { accessVersion: 1, apiKeys: 1, 'values.api': 1, 'values.accounts': 1 } as const;

function toAccessState(doc: Partial<SiteSettingsDoc> | null): AccessState {
  const api = (doc?.values?.api ?? {}) as { publicEnabled?: unknown; commentsEnabled?: unknown };
  return {
    version: doc?.accessVersion ?? 0,
    keys: { ...DEFAULT_KEY_SETTINGS, ...doc?.apiKeys },
    publicEnabled: api.publicEnabled !== false,
    commentsEnabled: api.commentsEnabled !== false,
    twoFactorRequired: (doc?.values?.accounts as { twoFactor?: unknown } | undefined)?.twoFactor === 'required',
  };
}

/**
 * Rate counters of known keys live in the same document, under `rl.w<windowStart>.k<keyId>`, so one
 * `findOneAndUpdate` both counts a request and returns the switches and version it must check:
 * one round trip for a key-authenticated request. Older windows are unset as new ones begin.
 */
export async function countAndReadAccessState(
  db: Db,
  siteId: string,
  windowStart: number,
  increments: Record<string, number>,
  staleWindows: readonly number[],
): Promise<{ state: AccessState; counts: Record<string, number> }> {
  const window = `rl.w${windowStart}`;
  const $inc = Object.fromEntries(Object.entries(increments).map(([field, by]) => [`${window}.${field}`, by]));
  const projection: Record<string, 1> = { ...STATE_PROJECTION };
  for (const field of Object.keys(increments)) projection[`${window}.${field}`] = 1;
  const update: Record<string, unknown> = { $inc };
  if (staleWindows.length) update.$unset = Object.fromEntries(staleWindows.map((w) => [`rl.w${w}`, '']));
  const doc = await settingsCollection(db).findOneAndUpdate({ _id: settingsId(siteId) }, update, { returnDocument: 'after', projection });
  const counted = ((doc as { rl?: Record<string, Record<string, number>> } | null)?.rl?.[`w${windowStart}`] ?? {}) as Record<string, number>;
  return { state: toAccessState(doc), counts: counted };
}

export async function writeKeySettings(db: Db, siteId: string, keys: KeySettings, now: Date): Promise<void> {
  await settingsCollection(db).updateOne(
    { _id: settingsId(siteId) },
    { $set: { apiKeys: keys, updatedAt: now }, $inc: { accessVersion: 1 }, $setOnInsert: { siteId } },
    { upsert: true },
  );
}

/** Drops counter windows older than `before` (idle gaps leave some behind the rolling unset). */
export async function dropCounterWindowsBefore(db: Db, siteId: string, before: number): Promise<void> {
  const doc = await settingsCollection(db).findOne({ _id: settingsId(siteId) }, { projection: { rl: 1 } });
  const old = Object.keys(doc?.rl ?? {}).filter((window) => Number(window.slice(1)) < before);
  if (old.length) await settingsCollection(db).updateOne({ _id: settingsId(siteId) }, { $unset: Object.fromEntries(old.map((w) => [`rl.${w}`, ''])) });
}
