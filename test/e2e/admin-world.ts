import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openAdminBrowser } from './browser.ts';
import { startWorld, type World } from '../support/world.ts';
import { addTestUser, createApiKey, setManagementApi } from '../support/access.ts';
import type { Capability } from '../../services/core/capabilities.ts';

export interface AdminWorld {
  world: World;
  browser: Browser;
  page: Page;
  /** The gateway's `http://127.0.0.1:<port>`. */
  base: string;
  /** Console errors and page errors seen so far (a test expects none). */
  problems: string[];
  /** A Management API call with the world's key: what the page did, checked from outside it. */
  manage(method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: any }>;
}

/**
 * An admin UI test's world, made before its tests and closed after them: the gateway listening on
 * loopback, the `users` (each with its built-in role), the Management API on with a key holding
 * `capabilities`, and Chromium on one page (the sign-in page's signed-out 401 is expected in its console).
 */
export function useAdminWorld(users: readonly { email: string; password: string; role: string }[], capabilities: Capability[]): AdminWorld {
  let key = '';
  const ui = {
    problems: [],
    async manage(method, url, payload) {
      const res = await ui.world.app.inject({
        method,
        url: `/api/manage/v1${url}`,
        headers: { authorization: `Bearer ${key}` },
        ...(payload ? { payload } : {}),
      });
      return { status: res.statusCode, body: res.statusCode === 204 ? null : res.json() };
    },
  } as Partial<AdminWorld> as AdminWorld;
  beforeAll(async () => {
    ui.world = await startWorld();
    await ui.world.app.listen({ port: 0, host: '127.0.0.1' });
    ui.base = `http://127.0.0.1:${(ui.world.app.server.address() as AddressInfo).port}`;
    for (const user of users) await addTestUser(ui.world, user.email, { role: user.role, password: user.password });
    await setManagementApi(ui.world, true);
    ({ key } = await createApiKey(ui.world, { capabilities }));
    ({ browser: ui.browser, page: ui.page } = await openAdminBrowser(ui.problems, { expectedConsole: /status of 401\b/ }));
  });
  afterAll(async () => {
    await ui.browser?.close();
    await ui.world?.close();
  });
  return ui;
}
