import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';
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
      const run = await runCli(['run', 'edit the guard', '--script', 'script.json', '--mode', 'accept-edits', '--yes', '--json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      const settled = jsonLines(run.stdout).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
      expect(settled.find((data) => data.name === 'edit'), run.stdout + run.stderr).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(settled.find((data) => data.name === 'write')).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(await readFile(join(workspace.path, 'scripts', 'guard.sh'), 'utf8')).toBe(guard);
      expect(await readFile(join(workspace.path, 'srv.js'), 'utf8')).toBe('// a local MCP server\n');
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
