import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('a test run that ran no test', () => {
  it('is an inconclusive verification: show says so, the trace outcome is unverified, and no memory says the tests pass', async () => {
    const workspace = await makeTempDir('rein-no-test-ran-');
    try {
      await mkdir(join(workspace.path, 'test'));
      await writeFile(join(workspace.path, 'test', 'a.test.js'), "const test = require('node:test');\nconst assert = require('node:assert');\ntest('fails', () => { assert.strictEqual(1, 2); });\n");
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'run', toolCalls: [{ name: 'bash', arguments: { command: 'node --test --test-name-pattern=zzz_nothing' } }] }, { text: 'All tests pass. Done.' }] }));
      const run = await runInProcess(['run', 'check the tests', '--script', 'script.json', '--yes'], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const show = await runInProcess(['show', id], { cwd: workspace.path });
      expect(show.stdout).toMatch(/verification inconclusive: node --test --test-name-pattern=zzz_nothing \(exit 0, no test ran\)/);
      const trace = await runInProcess(['trace', id], { cwd: workspace.path });
      expect(trace.stdout).toContain('unverified');
      expect(trace.stdout).not.toContain('succeeded');
      expect(trace.stdout).toContain('ran no test');
      const review = await runInProcess(['memory', 'review', '--json'], { cwd: workspace.path });
      expect(review.stdout).not.toContain('ran this repository');
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
