import type { Db } from 'mongodb';
import { newId } from '../core/ids.ts';
import { oauthCollections, type OAuthClientDoc } from './model.ts';

/** Stores a dynamically registered client (RFC 7591) of one site. */
export async function registerClient(db: Db, siteId: string, name: string, redirectUris: string[], now: Date): Promise<OAuthClientDoc> {
  const client: OAuthClientDoc = { _id: newId(), siteId, name, redirectUris, createdAt: now };
  await oauthCollections(db).clients.insertOne(client);
  return client;
}

/** A client of this site only: an id registered at another site's authorization server is unknown here. */
export async function findClient(db: Db, siteId: string, clientId: string): Promise<OAuthClientDoc | null> {
  return oauthCollections(db).clients.findOne({ _id: clientId, siteId });
}
