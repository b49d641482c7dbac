import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { writeFsServer } from '../support/fs-mcp-server.js';
import { makeTempDir } from '../support/temp-dir.js';

/*
 * Issue 25 §5 at the command line: without a TTY, the hint an MCP write approval prints approved the whole tool
 * (`--approve mcp__fs__write_file`, every path). It now shows the arguments and names that path only, and the rule it
 * prints answers that call and no other.
 */
describe('an MCP write asked without a TTY (issue 25 §5)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let serverDir: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  const env = () => ({ REIN_CONFIG_HOME: config.path, HOME: config.path });
  beforeAll(async () => {
    workspace = await makeTempDir('rein-mcp-approve-cli-');
    serverDir = await makeTempDir('rein-mcp-approve-cli-server-');
    config = await makeTempDir('rein-mcp-approve-cli-config-');
    // A real stdio server of the official SDK, in its own process, from a folder outside the workspace.
    const server = await writeFsServer(serverDir.path, { file: 'untouched.txt', text: 'x' });
    await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { fs: server } }));
    await writeFile(join(workspace.path, 's.json'), JSON.stringify({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'mcp__fs__write_file', arguments: { path: 'notes.md', content: 'hello\n'.repeat(30) } }] }, { text: 'Done.' }] }));
    expect((await runInProcess(['mcp', 'trust'], { cwd: workspace.path, env: env() })).code).toBe(0);
  });
  afterAll(async () => {
    await workspace.remove();
    await serverDir.remove();
    await config.remove();
  });

  it('pauses with the path, the content size and digest, and a hint that approves that path only; the hint answers it on resume', async () => {
    const run = await runInProcess(['run', 'write the notes', '--script', 's.json'], { cwd: workspace.path, env: env() });
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/waiting for approval [^\n]*path="notes\.md"[^\n]*content: 180 chars sha256:[0-9a-f]{12}/);
    expect(run.stdout).toMatch(/answer with: rein resume \S+ --approve mcp__fs__write_file:notes\.md /);
    expect(run.stdout).not.toMatch(/--approve mcp__fs__write_file[ \n]/);
    expect(existsSync(join(workspace.path, 'notes.md'))).toBe(false);
    const [summary] = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env: env() })).stdout);
    const other = await runInProcess(['resume', summary!.id, '--approve', 'mcp__fs__write_file:other.md'], { cwd: workspace.path, env: env() });
    expect(other.code).toBe(3);
    const resumed = await runInProcess(['resume', summary!.id, '--approve', 'mcp__fs__write_file:notes.md'], { cwd: workspace.path, env: env() });
    expect(resumed.code).toBe(0);
    expect(await readFile(join(workspace.path, 'notes.md'), 'utf8')).toBe('hello\n'.repeat(30));
  }, 120_000);
});
