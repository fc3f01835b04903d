import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = resolve(import.meta.dirname, '../../.data/screenshots');

export interface AdminBrowser {
  browser: Browser;
  page: Page;
}

/**
 * Debian's Chromium, headless, with one page whose console errors and uncaught exceptions (CSP
 * violations included) are pushed to `problems`, except those `expectedConsole` matches. Dialogs
 * (confirmations) are accepted.
 */
export async function openAdminBrowser(
  problems: string[],
  options: { width?: number; acceptDownloads?: boolean; expectedConsole?: RegExp } = {},
): Promise<AdminBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}; the admin UI end-to-end tests need it. Install it with ` +
        '`sudo apt-get update && sudo apt-get install -y chromium` (see docs/admin-ui.md).',
    );
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext({ viewport: { width: options.width ?? 1200, height: 900 }, acceptDownloads: options.acceptDownloads ?? false });
  context.setDefaultTimeout(60_000);
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && !options.expectedConsole?.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('dialog', (dialog) => void dialog.accept());
  return { browser, page };
}
