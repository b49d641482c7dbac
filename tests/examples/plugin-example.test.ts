import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const example = fileURLToPath(new URL('../../dist/scripts/examples/plugin-example.js', import.meta.url));

describe('the example plugin (scripts/examples/plugin-example.ts)', () => {
  it('runs its tool through the pipeline, its hook denies git push, and the session completes', async () => {
    const { stdout } = await run(process.execPath, [example]);
    expect(stdout.trim().split('\n')).toEqual([
      'test-runner__run_tests: ok: exit 0',
      'bash: error: Denied: pushing is for people, not agents (hook test-runner:no-push). Nothing was run.',
      'test-runner ready',
      'completed',
    ]);
  });
});
