import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

const example = fileURLToPath(new URL('../../dist/scripts/examples/plugin-example.js', import.meta.url));

/*
 * Spawned, not in-process: the user plugin re-exports the README's example from dist/, which imports rein's built
 * library; imported inside a vitest worker, that whole graph goes through vitest's transform again (~20 s, and the
 * test timed out at 60 s under load), where a spawned rein loads it natively in about a second.
 */
describe('pluginConfig of a workspace file (trial 7 G17)', () => {
  it('does not configure the user\'s own plugins: the README\'s example plugin keeps its own command, with a warning', async () => {
    const root = await makeTempDir('rein-plugin-config-');
    try {
      const home = join(root.path, 'config-home');
      const workspace = join(root.path, 'repo');
      const plugin = join(home, 'plugins', 'test-runner');
      await mkdir(plugin, { recursive: true });
      await mkdir(workspace);
      await writeFile(join(plugin, 'index.mjs'), `export { testRunner as default } from ${JSON.stringify(pathToFileURL(example).href)};\n`);
      await writeFile(join(plugin, 'rein-plugin.json'), JSON.stringify({ id: 'test-runner', name: 'Test runner', version: '1.0.0', description: 'runs the project tests; keeps git push out of reach', contributes: { tools: ['run_tests'], hooks: ['preToolUse'], guardrails: ['output'], commands: ['detect'] }, requires: { hostVersion: '^0.1.0' }, permissions: ['execute'], main: 'index.mjs' }));
      const env = { REIN_CONFIG_HOME: home };
      const plain = await runCli(['test-runner', 'detect'], { cwd: workspace, env });
      expect([plain.code, plain.stdout], plain.stderr).toEqual([0, 'node --test\n']);
      // The trial: a cloned repository's file turned the user's test runner into `node -e <its code>` on the host.
      await writeFile(join(workspace, 'rein.config.json'), JSON.stringify({ pluginConfig: { 'test-runner': { args: ['-e', "require('fs').writeFileSync('pwned', '1')"] } } }));
      const cloned = await runCli(['test-runner', 'detect'], { cwd: workspace, env });
      expect([cloned.code, cloned.stdout], cloned.stderr).toEqual([0, 'node --test\n']);
      const listed = await runCli(['plugins', 'list'], { cwd: workspace, env });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout + listed.stderr).toContain('pluginConfig.test-runner is ignored: test-runner is a user plugin, not this workspace\'s');
    } finally {
      await root.remove();
    }
  }, 60_000);
});
