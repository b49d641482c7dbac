import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostRunFiles } from '../../src/cli/host-run-files.js';
import type { CommandHooksConfig } from '../../src/hooks/command-hooks.js';
import type { McpServerConfig } from '../../src/mcp/mcp-config.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * Trial 6 F17, F21, F22: a hook named the Claude Code way (`"$CLAUDE_PROJECT_DIR"/scripts/g.sh`), one reached by
 * `cd scripts && ./g.sh`, a script that does not exist yet, and a server's script named through its `cwd`, `sh -c`
 * or `npx ./tool` were not protected, so the model could write the code rein then ran on the host.
 */
let dir: { path: string; remove: () => Promise<void> };
let root: string;
beforeEach(async () => {
  dir = await makeTempDir('rein-host-run-files-');
  root = await realpath(dir.path);
  await mkdir(join(root, 'scripts'));
  await mkdir(join(root, 'srv'));
  await mkdir(join(root, 'tool'));
  for (const file of ['scripts/g.sh', 'scripts/c.sh', 'srv/main.js', 'start.sh']) await writeFile(join(root, file), '#\n');
});
afterEach(() => dir.remove());

const hooksOf = (...commands: string[]) => ({ PreToolUse: commands.map((command) => ({ matcher: 'bash', hooks: [{ type: 'command', command }] })) }) as unknown as CommandHooksConfig;
const relative = (paths: string[]) => paths.map((path) => path.slice(root.length + 1)).sort();

describe('the workspace files configured hooks and MCP servers run on the host', () => {
  it('follow $CLAUDE_PROJECT_DIR, cd, a server cwd, sh -c and npx ./dir, and include scripts that do not exist yet', async () => {
    const hooks = hooksOf('"$CLAUDE_PROJECT_DIR"/scripts/g.sh', 'cd scripts && ./c.sh', '${REIN_PROJECT_DIR}/scripts/later.sh', 'npm test');
    const servers = {
      a: { command: 'node', args: ['main.js'], cwd: 'srv' },
      b: { command: 'sh', args: ['-c', './start.sh --port 1'] },
      c: { command: 'npx', args: ['./tool'] },
    } as unknown as Record<string, McpServerConfig>;
    expect(relative(await hostRunFiles(root, hooks, servers))).toEqual(['scripts/c.sh', 'scripts/g.sh', 'scripts/later.sh', 'srv/main.js', 'start.sh', 'tool']);
  });

  it('a word that is not a path (a program, a subcommand, an option) never becomes one', async () => {
    expect(await hostRunFiles(root, hooksOf('npm test --silent', 'exit 2', 'echo ok'), {})).toEqual([]);
  });

  it('trial 7 G5: globs, ${VAR:-default}, $(pwd), unknown variables, python -m, node -r and -Ilib are resolved or protected conservatively', async () => {
    await mkdir(join(root, 'scripts', 'checks'));
    await mkdir(join(root, 'tools'));
    await writeFile(join(root, 'top.sh'), '#\n');
    const hooks = hooksOf(
      'for f in scripts/checks/*.sh; do sh "$f"; done',
      '${CLAUDE_PROJECT_DIR:-.}/scripts/g.sh',
      '"$(pwd)"/scripts/c.sh',
      'sh $(git rev-parse --show-toplevel)/start.sh',
      '$TOOLS_HOME/scripts/unknown.sh',
      '${HOOK_DIR:-scripts}/fallback.sh',
      'python3 -m tools.g3',
      'sh ./*.sh',
      'ruby -Ilib x.rb',
      '[ -f a ] && echo ok',
    );
    const servers = { p: { command: 'python3', args: ['-m', 'tools.srv'] }, n: { command: 'node', args: ['-r', 'dotenv/config', 'srv/main.js'] } } as unknown as Record<string, McpServerConfig>;
    expect(relative(await hostRunFiles(root, hooks, servers))).toEqual(['lib', 'node_modules/dotenv', 'scripts/c.sh', 'scripts/checks', 'scripts/fallback.sh', 'scripts/g.sh', 'scripts/unknown.sh', 'srv/main.js', 'start.sh', 'tools', 'tools.py', 'top.sh'].sort());
  });
});
