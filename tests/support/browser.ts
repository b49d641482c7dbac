import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (the `chromium` package): the only browser the tests drive, never a downloaded one. */
export const chromiumPath = process.env.REIN_CHROMIUM ?? '/usr/bin/chromium';

/** Without the last flags Chromium reaches for the network (updates, sync, field trials) on a machine that has none. */
export const chromiumFlags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Whether the browser tests can run here; under CI a missing Chromium is a failure, not a skip. */
export const haveChromium = (): boolean => {
  if (existsSync(chromiumPath)) return true;
  if (process.env.CI) throw new Error(`Chromium is not installed at ${chromiumPath}: .ci/run installs Debian's chromium package`);
  return false;
};

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: chromiumPath, args: chromiumFlags });

/** A page whose errors and console errors are collected: `problems()` must be empty at the end of every test. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  problems(): string[];
  close(): Promise<void>;
}

export const watchedPage = async (browser: Browser, options: { offline?: boolean } = {}): Promise<WatchedPage> => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, ...(options.offline ? { offline: true } : {}) });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  return { page, context, problems: () => problems, close: () => context.close() };
};
