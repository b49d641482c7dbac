import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
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
      const run = await runInProcess(['run', 'write', '--script', 'script.json', '--plugin', plugin.path], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(3);
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      // The hint names the path (issue 30 E), and that rule answers the question.
      expect(run.stdout).toContain(`answer with: rein resume ${id} --plugin ${plugin.path} --approve write:w.txt`);
      const resumed = await runInProcess(['resume', id, '--approve', 'write:w.txt'], { cwd: workspace.path });
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(`this session ran with --plugin ${plugin.path}, which is not given now`);
    } finally {
      await workspace.remove();
      await plugin.remove();
    }
  }, 120_000);
});

describe('a --plugin folder inside the workspace', () => {
  it('is a protected path: the model cannot rewrite the code the printed resume line would load (trial 6 F24)', async () => {
    const workspace = await makeTempDir('rein-plugin-in-workspace-');
    try {
      await writePlugin(join(workspace.path, 'guard'), 'guard');
      const original = `export default { manifest: {}, setup: () => ({}) };\n`;
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: '1', toolCalls: [{ name: 'write', arguments: { path: 'guard/index.mjs', content: original } }] }, { text: 'Done.' }] }));
      const run = await runInProcess(['run', 'rewrite', '--script', 'script.json', '--plugin', './guard', '--mode', 'accept-edits', '--json'], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const settled = run.stdout.split('\n').filter((line) => line.includes('"tool.settled"')).map((line) => JSON.parse(line) as { data: { status: string; errorCode?: string } });
      expect(settled[0]?.data).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(await readFile(join(workspace.path, 'guard', 'index.mjs'), 'utf8')).toContain('answers pong');
    } finally {
      await workspace.remove();
    }
  }, 60_000);
});

describe('a plugin that leaves a handle open', () => {
  it('does not keep rein run or rein plugins list from exiting with their code (trial 5 E16)', async () => {
    const workspace = await makeTempDir('rein-plugin-handle-');
    try {
      const manifest = { id: 'tim', name: 'tim', version: '1.0.0', contributes: { tools: ['t'] }, permissions: ['read'] };
      await mkdir(join(workspace.path, 'tim'));
      await writeFile(join(workspace.path, 'tim', 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
      // setup opens an interval and nothing ever clears it.
      await writeFile(join(workspace.path, 'tim', 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => { setInterval(() => {}, 1000); return { tools: [{ name: 't', description: 'x', parameters: { type: 'object', properties: {} }, risk: 'read', execute: async () => 'x' }] }; } };\n`);
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      const run = await runInProcess(['run', 'x', '--script', 'script.json', '--plugin', './tim'], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toContain('completed');
      const listed = await runInProcess(['plugins', 'list', '--plugin', './tim'], { cwd: workspace.path });
      expect(listed.code, listed.stdout + listed.stderr).toBe(0);
    } finally {
      await workspace.remove();
    }
  }, 60_000);
});

describe('a plugin tool that needs approval (trial 7 G18)', () => {
  it('the printed --approve answer for it works, and a deny rule naming a plugin tool that does not exist is said', async () => {
    const workspace = await makeTempDir('rein-plugin-approve-');
    const plugin = await makeTempDir('rein-plugin-approve-dir-');
    try {
      const manifest = { id: 'runner', name: 'runner', version: '1.0.0', contributes: { tools: ['go'] }, permissions: ['write'] };
      await writeFile(join(plugin.path, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
      await writeFile(join(plugin.path, 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ tools: [{ name: 'go', description: 'writes', parameters: { type: 'object', properties: {} }, risk: 'write', execute: async () => 'went' }] }) };\n`);
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: '1', toolCalls: [{ name: 'runner__go', arguments: {} }] }, { text: 'Done.' }] }));
      const run = await runInProcess(['run', 'go', '--script', 'script.json', '--plugin', plugin.path, '--deny', 'runner__og'], { cwd: workspace.path });
      expect(run.code, run.stdout + run.stderr).toBe(3);
      expect(run.stdout + run.stderr).toContain('deny rule runner__og matches no tool of this session');
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const answer = new RegExp(`answer with: (rein resume ${id} [^\\n]*--approve runner__go)`).exec(run.stdout);
      expect(answer, run.stdout).not.toBeNull();
      const resumed = await runInProcess(['resume', id, '--plugin', plugin.path, '--approve', 'runner__go'], { cwd: workspace.path });
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('runner__go');
      expect(resumed.stdout).toContain('completed');
    } finally {
      await workspace.remove();
      await plugin.remove();
    }
  }, 120_000);
});
