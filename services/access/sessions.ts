import { secretDigest } from '../core/text.ts';
import type { Db } from 'mongodb';
import { randomToken } from '../core/ids.ts';
import { accessCollections, type SessionDoc } from './model.ts';

export const SESSION_COOKIE = 'cwb_session';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export async function createSession(
  db: Db,
  siteId: string,
  userId: string,
  now: Date,
  token: string = randomToken(32),
  device: { userAgent?: string; ip?: string } = {},
): Promise<{ token: string; expiresAt: Date }> {
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await accessCollections(db).sessions.insertOne({
    _id: secretDigest(token),
    siteId,
    userId,
    createdAt: now,
    expiresAt,
    lastSeenAt: now,
    ...(device.userAgent ? { userAgent: device.userAgent.slice(0, 512) } : {}),
    ...(device.ip ? { ip: device.ip } : {}),
  });
  return { token, expiresAt };
}

export async function touchSession(db: Db, sessionId: string, now: Date): Promise<void> {
  await accessCollections(db).sessions.updateOne({ _id: sessionId }, { $set: { lastSeenAt: now } });
}

/** A live session for this site, or null (unknown, expired, other site). */
export async function readSession(db: Db, siteId: string, token: string, now: Date): Promise<SessionDoc | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const session = await accessCollections(db).sessions.findOne({ _id: secretDigest(token), siteId });
  return session && session.expiresAt.getTime() > now.getTime() ? session : null;
}

export async function deleteSession(db: Db, siteId: string, sessionId: string): Promise<void> {
  await accessCollections(db).sessions.deleteOne({ _id: sessionId, siteId });
}
