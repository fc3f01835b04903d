import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Action, Filter } from '../core/hooks.ts';
import type { Operation } from '../core/operation.ts';

/**
 * What a plugin's `register` gets: filters and actions on the process-wide hooks, wrapped by the
 * host so they only run for sites where the plugin is active (the site comes from the caller's
 * `args`: `siteId`, or `ctx.site._id` for `mcp.tools`).
 */
export interface PluginHostApi {
  addFilter<T>(name: string, filter: Filter<T>): void;
  addAction(name: string, action: Action): void;
}

/** What `activate` / `deactivate` get: the one site they act on (they run inside the activation workflow). */
export interface PluginSiteApi {
  pluginId: string;
  workspaceId: string;
  siteId: string;
  /** The workspace database; every document written must carry `siteId`. */
  db: Db;
  log: Logger;
  now(): Date;
}

/**
 * A plugin is code registered in-process (there is no upload of code). `register` runs once per
 * process (gateway and worker alike) so every process carries the plugin's filters; `activate`
 * is the once-per-site routine (seed data, check prerequisites) and may throw, which the
 * Management API reports as 502 and leaves the plugin inactive.
 */
export interface PluginDefinition {
  id: string;
  name: string;
  version: string;
  description: string;
  register?(api: PluginHostApi): void;
  /**
   * Routes the plugin serves (declared like any operation). Mounted at start for every site but
   * answered only where the plugin is active (404 elsewhere), and listed in a site's OpenAPI
   * document and tool list only then. Only plugins known at start (the built-ins) can add routes:
   * the HTTP app's routes are fixed when it is built.
   */
  operations?: readonly Operation[];
  activate?(api: PluginSiteApi): void | Promise<void>;
  deactivate?(api: PluginSiteApi): void | Promise<void>;
}
