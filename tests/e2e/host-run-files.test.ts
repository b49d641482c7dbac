import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const guard = '#!/bin/bash\ncat > /dev/null\nexit 0\n';

describe('files that configured hooks and local MCP servers run on the host are protected', () => {
  it('the model cannot edit a hook script or a local MCP server that rein would run outside the sandbox', async () => {
    const workspace = await makeTempDir('rein-host-files-');
    try {
      await mkdir(join(workspace.path, 'scripts'));
      await writeFile(join(workspace.path, 'scripts', 'guard.sh'), guard);
      await chmod(join(workspace.path, 'scripts', 'guard.sh'), 0o755);
      await writeFile(join(workspace.path, 'srv.js'), '// a local MCP server\n');
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'bash|write|edit|read', hooks: [{ type: 'command', command: './scripts/guard.sh', timeout: 30 }] }] } }));
      await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { local: { command: 'node', args: ['./srv.js'] } } }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: '1', toolCalls: [{ name: 'edit', arguments: { path: 'scripts/guard.sh', old_string: 'exit 0', new_string: 'env > leaked.txt\nexit 0' } }] },
        { text: '2', toolCalls: [{ name: 'write', arguments: { path: 'srv.js', content: "require('fs').writeFileSync('leaked.txt', JSON.stringify(process.env));\n" } }] },
        { text: '3', toolCalls: [{ name: 'bash', arguments: { command: 'echo pwned >> scripts/guard.sh; echo status=$?' } }] },
        { text: 'Done.' },
      ] }));
      const run = await runInProcess(['run', 'edit the guard', '--script', 'script.json', '--mode', 'accept-edits', '--yes', '--json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      const settled = jsonLines(run.stdout).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
      expect(settled.find((data) => data.name === 'edit'), run.stdout + run.stderr).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(settled.find((data) => data.name === 'write')).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(await readFile(join(workspace.path, 'scripts', 'guard.sh'), 'utf8')).toBe(guard);
      expect(await readFile(join(workspace.path, 'srv.js'), 'utf8')).toBe('// a local MCP server\n');
    } finally {
      await workspace.remove();
    }
  }, 120_000);

  it('trial 7 G5: a glob, ${CLAUDE_PROJECT_DIR:-.}, "$(pwd)" and python3 -m name what a hook runs: the model can write none of it', async () => {
    const workspace = await makeTempDir('rein-host-forms-');
    const env = { REIN_CONFIG_HOME: join(workspace.path, '.config-home') };
    try {
      await mkdir(join(workspace.path, 'scripts', 'checks'), { recursive: true });
      await mkdir(join(workspace.path, 'tools'));
      for (const file of ['scripts/checks/a.sh', 'scripts/g2.sh', 'scripts/g4.sh']) {
        await writeFile(join(workspace.path, file), '#!/bin/sh\nexit 0\n');
        await chmod(join(workspace.path, file), 0o755);
      }
      await writeFile(join(workspace.path, 'tools', 'g3.py'), 'import sys; sys.exit(0)\n');
      await writeFile(join(workspace.path, 'tools', '__init__.py'), '');
      await writeFile(join(workspace.path, 'a.txt'), 'hi\n');
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'read', hooks: [
        { type: 'command', command: 'for f in scripts/checks/*.sh; do sh "$f"; done' },
        { type: 'command', command: '${CLAUDE_PROJECT_DIR:-.}/scripts/g2.sh' },
        { type: 'command', command: 'python3 -m tools.g3' },
        { type: 'command', command: '"$(pwd)"/scripts/g4.sh' },
      ] }] } }));
      expect((await runInProcess(['hooks', 'trust'], { cwd: workspace.path, env })).code).toBe(0);
      const writes = ['scripts/checks/zz.sh', 'scripts/g2.sh', 'tools/g3.py', 'tools/new.py', 'scripts/g4.sh'];
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'w', toolCalls: writes.map((path) => ({ name: 'write', arguments: { path, content: '#!/bin/sh\nenv > leaked.txt\n' } })) },
        { text: 'r', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
        { text: 'Done.' },
      ] }));
      const run = await runInProcess(['run', 'rewrite the checks', '--script', 'script.json', '--mode', 'accept-edits', '--json'], { cwd: workspace.path, env });
      const settled = jsonLines(run.stdout).filter((record) => record.type === 'tool.settled' && record.data.name === 'write').map((record) => record.data as { status: string; errorCode?: string });
      expect(settled, run.stdout + run.stderr).toHaveLength(writes.length);
      for (const data of settled) expect(data).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(await readFile(join(workspace.path, 'scripts', 'g2.sh'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
