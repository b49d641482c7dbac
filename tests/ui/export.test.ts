import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCommand } from '../../src/cli/commands/serve.action.js';
import { haveChromium, launchChromium, watchedPage } from '../support/browser.js';
import { startViewerFixture, type ViewerFixture } from '../support/viewer-fixture.js';

/** `rein export <id> --html`: one file that opens offline (no server, no network) and shows the session, secrets redacted. */
describe.runIf(haveChromium())('an exported session', () => {
  let fixture: ViewerFixture;
  let browser: Browser;

  beforeAll(async () => {
    fixture = await startViewerFixture();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await fixture?.close();
  });

  it('opens offline as the viewer of that session, with the secrets it held redacted', async () => {
    const secret = 'sk-live0123456789abcdefSECRETVALUE';
    const id = await fixture.runToEnd(`fix the failing test; the key is ${secret} and OPENAI_API_KEY=abcd1234efgh5678`);
    const file = join(fixture.workspace, 'export.html');
    await exportCommand(id, { workspace: fixture.workspace, html: true, out: file, json: true });
    const html = await readFile(file, 'utf8');
    expect(html).not.toContain(secret);
    expect(html).not.toContain('abcd1234efgh5678');
    expect(html).toContain('[redacted]');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="(?!data:)/);

    const watched = await watchedPage(browser, { offline: true });
    const requests: string[] = [];
    watched.page.on('request', (request) => requests.push(request.url()));
    await watched.page.goto(pathToFileURL(file).href);
    await watched.page.locator('.session-head h2', { hasText: id }).waitFor();
    await watched.page.locator('.step[data-kind="end"]').waitFor();
    await watched.page.locator('.step[data-kind="turn"]').nth(1).click();
    await watched.page.locator('[data-testid="context-parts"]').waitFor();
    await watched.page.locator('.tabs a', { hasText: 'machines' }).click();
    await watched.page.locator('[data-machine="session"] .node.active').first().waitFor();
    expect(await watched.page.locator('.session-head .task, .session .task').first().textContent()).toContain('[redacted]');
    expect(requests.filter((url) => !url.startsWith('file:') && !url.startsWith('data:'))).toEqual([]);
    const problems = watched.problems();
    await watched.close();
    expect(problems).toEqual([]);
  });
});
