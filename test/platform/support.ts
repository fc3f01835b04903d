import type { World } from '../support/world.ts';
import { createApiKey } from '../support/access.ts';
import { platformCollections } from '../../services/platform/workspaces.ts';
import type { Workspace } from '../../services/core/tenants.ts';

export const newAdmin = { email: 'owner@lifecycle.example.test', password: 'correct horse battery staple' };

/** A Management API caller with a platform operator's key (the bootstrap administrator's). */
export async function operatorCaller(world: World) {
  const { key } = await createApiKey(world, { capabilities: ['users:manage', 'users:read'] });
  return (method: string, url: string, payload?: unknown) =>
    world.app.inject({ method: method as never, url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${key}` }, payload: payload as never });
}

export const workspaceRow = (world: World, id: string) => platformCollections(world.services).workspaces.findOne({ _id: id });

/** Polls the workspace row until `done` holds (the worker finishing a step), or fails after `ms`. */
export async function waitForWorkspace(world: World, id: string, done: (w: Workspace) => boolean, ms = 60_000): Promise<Workspace> {
  const deadline = Date.now() + ms;
  for (;;) {
    const row = await workspaceRow(world, id);
    if (row && done(row)) return row;
    if (Date.now() > deadline) throw new Error(`workspace ${id} stayed ${row?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function databaseNames(world: World): Promise<string[]> {
  return (await world.services.mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name);
}
