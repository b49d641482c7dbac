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
    // The display prints in log order: each turn's text, then its calls and their results, then the next turn — a
    // claim never appears before the tool result that proves (or refutes) it.
    const agent = stdout.slice(stdout.indexOf('agent (scripted model)'), stdout.indexOf('\ncompleted\n'));
    const order = [
      "I'll start by looking at the project layout.",
      '  ✓ list_dir .',
      '  ✓ glob **/*.js',
      'Running the tests to see what fails.',
      '  ? run the test suite: bash node --test',
      '  → allow-once',
      '  ✗ bash node --test (exit 1,',
      'Reading the failing test and the implementation.',
      '  ✓ read test/stats.test.js',
      '  ✓ read src/stats.js',
      '`sum` starts at 0',
      '  ? edit src/stats.js',
      '  → allow-once',
      '  ✓ edit src/stats.js',
      'Running the tests again.',
      '  ? run the test suite: bash node --test',
      '  → allow-once',
      '  ✓ bash node --test (exit 0,',
      'Fixed: `sum` subtracted each value',
    ];
    const shown = agent.split('\n').filter((line) => order.some((start) => line.startsWith(start)));
    expect(shown.map((line) => order.find((start) => line.startsWith(start)))).toEqual(order);
    const workspace = /workspace (\S+)/.exec(stdout)?.[1];
    if (workspace?.includes('rein-demo-')) await rm(workspace, { recursive: true, force: true });
  });
});
