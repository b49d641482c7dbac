import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

/** A plugin directory with one read-only tool, `<id>__ping`. */
const writePlugin = async (directory: string, id: string): Promise<void> => {
  await mkdir(directory, { recursive: true });
  const manifest = { id, name: id, version: '1.0.0', contributes: { tools: ['ping'] }, permissions: ['read'] };
  await writeFile(join(directory, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
  await writeFile(join(directory, 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ tools: [{ name: 'ping', description: 'answers pong', parameters: { type: 'object', properties: {} }, risk: 'read', execute: async () => 'pong' }] }) };\n`);
};

describe('a session run with --plugin', () => {
  it('is told to resume with the same --plugin, and a resume without it is warned that the plugin no longer applies', async () => {
    const workspace = await makeTempDir('rein-resume-plugin-');
    const plugin = await makeTempDir('rein-resume-plugin-dir-');
    try {
      await writePlugin(plugin.path, 'guard');
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: '1', toolCalls: [{ name: 'write', arguments: { path: 'w.txt', content: 'x' } }] }, { text: 'Done.' }] }));
      const run = await runCli(['run', 'write', '--script', 'script.json', '--plugin', plugin.path], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(3);
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      expect(run.stdout).toContain(`answer with: rein resume ${id} --plugin ${plugin.path} --approve "write"`);
      const resumed = await runCli(['resume', id, '--approve', 'write'], { cwd: workspace.path });
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(`this session ran with --plugin ${plugin.path}, which is not given now`);
    } finally {
      await workspace.remove();
      await plugin.remove();
    }
  }, 120_000);
});
