import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('configuration and flag mistakes are typed errors (trial 5 E45, E46)', () => {
  it('a hook matcher that is not a regular expression is CONFIG_INVALID naming it, not a raw ERROR', async () => {
    const workspace = await makeTempDir('rein-matcher-');
    try {
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: '(unclosed', hooks: [{ type: 'command', command: 'exit 2' }] }] } }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      const run = await runCli(['run', 'x', '--script', 'script.json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      expect(run.code, run.stderr).not.toBe(0);
      expect(run.stderr).toContain('CONFIG_INVALID');
      expect(run.stderr).toContain('not a valid regular expression');
    } finally {
      await workspace.remove();
    }
  });

  it('--otlp and --inspect with --detach are USAGE, like --no-memory', async () => {
    const workspace = await makeTempDir('rein-detach-flags-');
    try {
      for (const flag of [['--otlp', 'http://127.0.0.1:9'], ['--inspect']]) {
        const run = await runCli(['run', 'x', '--script', 'script.json', '--detach', ...flag], { cwd: workspace.path });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(`rein: USAGE: ${flag[0]} applies to a session this process runs`);
      }
    } finally {
      await workspace.remove();
    }
  });
});
