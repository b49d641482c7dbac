import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../support/temp-dir.js';

const run = promisify(execFile);
const demo = fileURLToPath(new URL('../../dist/scripts/demo/run-demo.js', import.meta.url));

describe('npm start (the demo)', () => {
  let home: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    home = await makeTempDir('rein-demo-home-');
  });
  afterEach(() => home.remove());

  it('shows a red suite turning green, both runs recorded truthfully from their exit codes, and a succeeded trace', async () => {
    // HOME is empty, so no shell profile of this machine's user takes part.
    const { stdout } = await run(process.execPath, [demo], { env: { ...process.env, HOME: home.path } });
    expect(stdout).toMatch(/✗ bash node --test \(exit 1, \d+ ms\)/);
    expect(stdout).toMatch(/✓ bash node --test \(exit 0, \d+ ms\)/);
    expect(stdout).toMatch(/verifications: #\d+ node --test failed \(exit 1\) · #\d+ node --test passed \(exit 0\)/);
    expect(stdout).toContain('trace: outcome succeeded');
    const workspace = /workspace (\S+)/.exec(stdout)?.[1];
    if (workspace?.includes('rein-demo-')) await rm(workspace, { recursive: true, force: true });
  });
});
