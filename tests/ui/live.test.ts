import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReinSession } from '../../src/index.js';
import { haveChromium, launchChromium, watchedPage, type WatchedPage } from '../support/browser.js';
import { startViewerFixture, type ViewerFixture } from '../support/viewer-fixture.js';

/** The page's diagnostics (ui/live.ts): what its live feed received, in order, and how often it connected. */
type Diagnostics = { reinViewer?: { live: number[]; connects: number } };
const received = (watched: WatchedPage) => watched.page.evaluate(() => (globalThis as Diagnostics).reinViewer?.live ?? []);

/** Answer the approvals the session waits for until it ends. */
const approveToEnd = async (session: ReinSession) => {
  for (let result = await session.whenQuiet(); result.status === 'paused'; result = await session.whenQuiet()) {
    const pending = session.pendingApprovals();
    if (pending.length === 0) break;
    for (const request of pending) await session.approve(request.approvalId, { decision: 'allow-once' });
  }
};

/**
 * The page follows a session another frontend drives (here: the harness itself, as a `rein run` in a terminal
 * would), appending as records are written, and survives a restart of the server: it reconnects from the last seq it
 * has, with no record twice and none missing.
 */
describe.runIf(haveChromium())('the viewer follows a running session', () => {
  let fixture: ViewerFixture;
  let browser: Browser;
  let watched: WatchedPage;

  beforeAll(async () => {
    fixture = await startViewerFixture();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await fixture?.close();
  });
  /** While the server is down (the restart test), the browser logs each refused reconnection: that and nothing else. */
  let expected: RegExp | undefined;
  afterEach(async () => {
    const problems = watched.problems().filter((problem) => !expected?.test(problem));
    expected = undefined;
    await watched.close();
    expect(problems).toEqual([]);
  });

  it('appends a running session’s records as they are written, without reload', async () => {
    const session = await fixture.rein.startSession({ task: 'fix the failing test, watched' });
    await session.whenQuiet();
    const before = await fixture.writer.head(session.id);
    watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(fixture.listening.pageUrl(session.id));
    await page.locator(`[data-live="live"][data-last="${before}"]`).waitFor();
    const stepsBefore = Number(await page.locator('[data-testid="timeline"]').getAttribute('data-total'));
    await approveToEnd(session);
    const head = await fixture.writer.head(session.id);
    await page.locator(`[data-live="live"][data-last="${head}"]`).waitFor();
    await page.locator('.step[data-kind="end"]').waitFor();
    expect(Number(await page.locator('[data-testid="timeline"]').getAttribute('data-total'))).toBeGreaterThan(stepsBefore);
    expect(await received(watched)).toEqual(Array.from({ length: head - before }, (_, index) => before + 1 + index));
    await page.locator('.session-head [data-badge="status"]', { hasText: 'completed' }).waitFor();
  });

  it('reconnects after the server restarts and resumes from the last seq, with no duplicate and no gap', async () => {
    const session = await fixture.rein.startSession({ task: 'fix the failing test, across a restart' });
    await session.whenQuiet();
    const before = await fixture.writer.head(session.id);
    watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(fixture.listening.pageUrl(session.id));
    await page.locator(`[data-live="live"][data-last="${before}"]`).waitFor();
    expected = /^console error: Failed to load resource: net::ERR_CONNECTION_REFUSED$/;
    await fixture.stopServer();
    await page.locator('[data-live="reconnecting"]').waitFor();
    // The session goes on while no server serves the page: the records land in the log only.
    await approveToEnd(session);
    const head = await fixture.writer.head(session.id);
    expect(head).toBeGreaterThan(before);
    await fixture.restart();
    await page.locator(`[data-live="live"][data-last="${head}"]`).waitFor();
    await page.locator('.step[data-kind="end"]').waitFor();
    expect(await received(watched)).toEqual(Array.from({ length: head - before }, (_, index) => before + 1 + index));
    expect(await page.evaluate(() => (globalThis as Diagnostics).reinViewer?.connects ?? 0)).toBeGreaterThanOrEqual(2);
  });
});
