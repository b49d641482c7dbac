import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { haveChromium, launchChromium, watchedPage, type WatchedPage } from '../support/browser.js';
import { buggyStats } from '../support/agent-fixtures.js';
import { startViewerFixture, type ViewerFixture } from '../support/viewer-fixture.js';
import { flattenRecords } from '../../src/host/step-record.js';

/** The page's location (in functions evaluated in the page, which the tests' DOM-less types do not know). */
type Paged = { location: { hash: string } };

const screenshot = fileURLToPath(new URL('../../docs/images/viewer.png', import.meta.url));

/**
 * The viewer in a real Chromium (Debian's), one browser and one workspace for the file: the session list, a step as
 * the model saw it, the machines, forking from a step, compare, and answering an approval on the page.
 */
describe.runIf(haveChromium())('the session viewer in Chromium', () => {
  let fixture: ViewerFixture;
  let browser: Browser;
  let watched: WatchedPage;
  let done: string;

  beforeAll(async () => {
    fixture = await startViewerFixture();
    done = await fixture.runToEnd();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await fixture?.close();
  });
  afterEach(async () => {
    const problems = watched.problems();
    await watched.close();
    expect(problems).toEqual([]);
  });

  it('lists the sessions with their status and trace outcome, and searches and filters them', async () => {
    watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(fixture.listening.pageUrl());
    // The token URL set the cookie and left for a URL without the token.
    expect(page.url()).toBe(`${fixture.listening.origin}/`);
    const row = page.locator(`tr[data-session="${done}"]`);
    await row.waitFor();
    expect(await row.locator('[data-badge="status"]').textContent()).toBe('completed');
    expect(await row.locator('[data-badge="outcome"]').textContent()).toBe('succeeded');
    expect(await row.locator('td.id').textContent()).toContain(done);
    // The scripted provider's model has no price: a known 0, not unknown.
    expect(await row.locator('[data-testid="cost"]').textContent()).toBe('$0.0000');
    await page.getByLabel('search sessions').fill('no such task');
    await page.getByText('no session matches').waitFor();
    await page.getByLabel('search sessions').fill('failing');
    await row.waitFor();
    await page.getByLabel('filter by status').selectOption('failed');
    await page.getByText('no session matches').waitFor();
    await page.getByLabel('filter by status').selectOption('completed');
    await row.waitFor();
  });

  it('shows a step as the model saw it, jumps to the first failure, and highlights the machines’ states', async () => {
    watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(fixture.listening.pageUrl(done));
    await page.locator('[data-testid="timeline"] .step').first().waitFor();
    expect(await page.locator('[data-testid="session-cost"]').textContent()).toMatch(/^cost \$0\.0000/);
    await page.keyboard.press('f');
    const failure = page.locator('.step.selected');
    expect(await failure.getAttribute('data-kind')).toBe('verification');
    await page.locator('.step[data-kind="turn"]').nth(1).click();
    const step = page.locator('[data-testid="step"]');
    await step.locator('[data-testid="context-parts"]').waitFor();
    expect(await step.locator('[data-testid="context-parts"] tbody tr').count()).toBeGreaterThan(2);
    await step.getByText('diff against turn 1').waitFor();
    await step.locator('[data-testid="diff"] .line.added').first().waitFor();
    await step.locator('[data-testid="permission"]').first().waitFor();
    expect(await step.locator('[data-testid="permission"]').first().textContent()).toContain('allow');
    await step.getByText('exit 1').first().waitFor();
    await page.locator('.step[data-kind="call"]', { hasText: 'edit src/stats.js' }).click();
    await step.locator('[data-testid="diff"] .line.removed').first().waitFor();
    // The files the call changed, from its workspace.changed, with the diff of the stored contents on demand.
    const changed = step.locator('[data-testid="files-changed"] [data-testid="changed-file"]', { hasText: 'src/stats.js' });
    expect(await changed.textContent()).toContain('modified');
    await changed.getByText('diff', { exact: true }).click();
    expect(await changed.locator('[data-testid="diff"] .line.added').first().textContent()).toContain('t + x');
    await mkdir(fileURLToPath(new URL('../../docs/images/', import.meta.url)), { recursive: true });
    await page.locator('.step[data-kind="turn"]').nth(1).click();
    await step.locator('[data-testid="context-parts"]').waitFor();
    await page.screenshot({ path: screenshot });
    await page.locator('.tabs a', { hasText: 'machines' }).click();
    await page.locator('[data-machine="session"] .node.active').first().waitFor();
    await page.locator('[data-machine="turn"] .node.active').first().waitFor();
  });

  it('forks from a step and compares the fork with its parent', async () => {
    watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(fixture.listening.pageUrl(done));
    await page.locator('.step[data-kind="turn"]').nth(3).click();
    const fork = page.locator('[data-testid="step"] button', { hasText: 'fork here' });
    await fork.waitFor();
    const at = Number(/#(\d+)/.exec((await fork.textContent()) ?? '')?.[1]);
    await fork.click();
    await page.waitForFunction((parent) => (globalThis as unknown as Paged).location.hash.startsWith('#/s/') && !(globalThis as unknown as Paged).location.hash.includes(parent), done);
    const forked = decodeURIComponent(page.url().split('#/s/')[1]!.split('/')[0]!);
    expect(await fixture.writer.info(forked)).toMatchObject({ forkedFrom: { stream: done, seq: at } });
    expect((await fixture.writer.read(forked, { reverse: true, limit: 1 }))[0]).toMatchObject({ type: 'session.forked', data: { parent: done, atSeq: at } });
    await page.getByText('compare with it').click();
    await page.locator('[data-testid="compare"] .compare-table').waitFor();
    await page.getByText(`aligned at the fork point #${at}`).waitFor();
    expect(await page.locator('[data-testid="first-difference"]').textContent()).toContain('first differing turn');
  });

  it('answers an approval on the page, and the session goes on (checked in the log)', async () => {
    watched = await watchedPage(browser);
    const { page } = watched;
    await writeFile(join(fixture.workspace, 'src', 'stats.js'), buggyStats);
    await page.goto(fixture.listening.pageUrl());
    await page.getByLabel('new session task').fill('fix the failing test from the page');
    await page.getByRole('button', { name: 'start' }).click();
    await page.waitForFunction(() => (globalThis as unknown as Paged).location.hash.startsWith('#/s/'));
    const id = decodeURIComponent(page.url().split('#/s/')[1]!.split('/')[0]!);
    const card = page.locator('[data-testid="approvals"] .approval').first();
    await card.waitFor();
    expect(await card.textContent()).toContain('node --test');
    await card.getByRole('button', { name: 'allow for the session' }).click();
    await page.locator('.session-head [data-badge="status"]', { hasText: 'completed' }).waitFor();
    const records = await fixture.writer.read(id);
    const replied = records.filter((record) => record.type === 'approval.replied');
    expect(replied).toHaveLength(1);
    expect(replied[0]!.data).toMatchObject({ decision: 'allow-session' });
    expect(flattenRecords(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
    expect(records.filter((record) => record.type === 'verification.recorded').map((record) => (record.data as { status: string }).status)).toEqual(['failed', 'passed']);
  });
});
