import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('rein run without a task', () => {
  it('is USAGE for a model provider (nothing is sent or recorded in the user\'s name); a script still runs without one', async () => {
    const workspace = await makeTempDir('rein-no-task-');
    try {
      const env = { REIN_PROVIDER: '', REIN_MODEL: '', REIN_BASE_URL: '' };
      for (const task of [[], [''], ['   ']]) {
        const run = await runInProcess(['run', ...task, '--provider', 'openai', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'], { cwd: workspace.path, env });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain('rein: USAGE: rein run needs a task');
      }
      expect(existsSync(join(workspace.path, '.rein'))).toBe(false);
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      const scripted = await runInProcess(['run', '--script', 'script.json'], { cwd: workspace.path, env });
      expect(scripted.code, scripted.stdout + scripted.stderr).toBe(0);
    } finally {
      await workspace.remove();
    }
  }, 60_000);
});
