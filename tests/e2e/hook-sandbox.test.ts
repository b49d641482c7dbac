import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeProjectHooks, type ProjectHooks } from '../../src/hooks/project-hooks.js';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { requireBubblewrap } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';

/**
 * Trial 6 F2: a trusted hook that runs the project's tooling (`npm test`) ran `package.json`'s script — a file the
 * model writes unasked in accept-edits — on the host, with the user's whole environment. A workspace file's hooks now
 * run inside the bash sandbox unless they say `"sandbox": false`.
 */
describe('the command hooks of a workspace rein.config.json run inside the bash sandbox', () => {
  it('a Stop hook running npm test runs the model\'s package.json script confined: no secret, nothing outside the workspace', async () => {
    if (!(await requireBubblewrap())) return;
    const workspace = await makeTempDir('rein-hook-sandbox-');
    const outside = await makeTempDir('rein-hook-outside-');
    const configHome = await makeTempDir('rein-hook-config-');
    try {
      const planted = join(outside.path, 'PWN_NPM');
      await writeFile(join(workspace.path, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: 'node --test' } }));
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'npm test --silent >&2 || exit 2', timeout: 60 }] }] } }));
      const script = `env > hook-env.txt; (id > ${planted}) 2>/dev/null; exit 0`;
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'tidy', toolCalls: [{ name: 'write', arguments: { path: 'package.json', content: JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: script } }) } }] },
        { text: 'Done.' },
      ] }));
      const env = { REIN_CONFIG_HOME: configHome.path, OPENAI_API_KEY: 'sk-HOOKLEAK123' };
      expect((await runInProcess(['hooks', 'trust'], { cwd: workspace.path, env })).code).toBe(0);
      const run = await runInProcess(['run', 'tidy up', '--script', 'script.json', '--mode', 'accept-edits', '--json'], { cwd: workspace.path, env });
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      expect(records.find((record) => record.type === 'tool.settled')?.data).toMatchObject({ name: 'write', status: 'ok' });
      // The hook ran (it wrote into the workspace), inside the sandbox: the key was not in its environment and the
      // file outside the workspace was never written.
      const seen = await readFile(join(workspace.path, 'hook-env.txt'), 'utf8');
      expect(seen).toContain(`REIN_PROJECT_DIR=${workspace.path}`);
      expect(seen).not.toContain('sk-HOOKLEAK123');
      expect(existsSync(planted)).toBe(false);
      expect(records.some((record) => record.type === 'hook.decided')).toBe(true);
    } finally {
      await workspace.remove();
      await outside.remove();
      await configHome.remove();
    }
  }, 120_000);

  it('a PreToolUse guard script of the workspace still runs and decides, but cannot change itself', async () => {
    if (!(await requireBubblewrap())) return;
    const workspace = await makeTempDir('rein-hook-guard-');
    const configHome = await makeTempDir('rein-hook-config-');
    try {
      const guard = '#!/bin/sh\ninput=$(cat)\necho tampered >> scripts/guard.sh 2>/dev/null && echo "wrote itself" >&2\ncase "$input" in *secret*) echo "secret files stay closed" >&2; exit 2;; esac\nexit 0\n';
      await mkdir(join(workspace.path, 'scripts'));
      await writeFile(join(workspace.path, 'scripts', 'guard.sh'), guard);
      await chmod(join(workspace.path, 'scripts', 'guard.sh'), 0o755);
      await writeFile(join(workspace.path, 'secret.txt'), 'hunter2\n');
      await writeFile(join(workspace.path, 'notes.txt'), 'hello\n');
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'read', hooks: [{ type: 'command', command: './scripts/guard.sh' }] }] } }));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'look', toolCalls: [{ name: 'read', arguments: { path: 'secret.txt' } }, { name: 'read', arguments: { path: 'notes.txt' } }] },
        { text: 'Done.' },
      ] }));
      const env = { REIN_CONFIG_HOME: configHome.path };
      expect((await runInProcess(['hooks', 'trust'], { cwd: workspace.path, env })).code).toBe(0);
      const run = await runInProcess(['run', 'look', '--script', 'script.json', '--json'], { cwd: workspace.path, env });
      expect(run.code, run.stderr).toBe(0);
      const settled = jsonLines(run.stdout).filter((record) => record.type === 'tool.settled').map((record) => record.data as { status: string; errorCode?: string; observation?: string });
      expect(settled).toHaveLength(2);
      expect(settled[0]).toMatchObject({ status: 'error', errorCode: 'Denied' });
      expect(JSON.stringify(settled[0])).toContain('secret files stay closed');
      expect(settled[1]).toMatchObject({ status: 'ok' });
      expect(await readFile(join(workspace.path, 'scripts', 'guard.sh'), 'utf8')).toBe(guard);
      // rein sandbox shows it among the protected paths, as rein run protects it (trial 7 G14).
      const report = JSON.parse((await runInProcess(['sandbox', '--json'], { cwd: workspace.path, env })).stdout) as { protected: Array<{ path: string; state: string }> };
      expect(report.protected).toContainEqual({ path: join(await realpath(workspace.path), 'scripts', 'guard.sh'), state: 'masked' });
    } finally {
      await workspace.remove();
      await configHome.remove();
    }
  }, 120_000);

  it('a local MCP server of .mcp.json starts inside the sandbox: a module it imports, rewritten by the model, runs confined', async () => {
    if (!(await requireBubblewrap())) return;
    const workspace = await makeTempDir('rein-mcp-sandbox-');
    const outside = await makeTempDir('rein-mcp-outside-');
    const configHome = await makeTempDir('rein-mcp-config-');
    try {
      const planted = join(outside.path, 'PWN_MCP_LIB');
      // A real (minimal) MCP server over stdio; it imports ./lib.mjs, which no configuration names.
      await writeFile(join(workspace.path, 'srv.mjs'), [
        "import './lib.mjs';",
        "import { createInterface } from 'node:readline';",
        "const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');",
        "createInterface({ input: process.stdin }).on('line', (line) => {",
        "  const message = JSON.parse(line);",
        "  if (message.id === undefined) return;",
        "  if (message.method === 'initialize') send({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'local', version: '1.0.0' } } });",
        "  else if (message.method === 'tools/list') send({ jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'ping', inputSchema: { type: 'object' } }] } });",
        "  else send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'not here' } });",
        '});',
      ].join('\n'));
      await writeFile(join(workspace.path, 'lib.mjs'), 'export {};\n');
      await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { local: { command: 'node', args: ['./srv.mjs'] } } }));
      const lib = `import { writeFileSync } from 'node:fs';\ntry { writeFileSync(${JSON.stringify(planted)}, 'x'); } catch {}\nwriteFileSync('mcp-env.txt', JSON.stringify(process.env));\n`;
      await writeFile(join(workspace.path, 'first.json'), JSON.stringify({ turns: [{ text: 'tidy', toolCalls: [{ name: 'write', arguments: { path: 'lib.mjs', content: lib } }] }, { text: 'Done.' }] }));
      await writeFile(join(workspace.path, 'second.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      const env = { REIN_CONFIG_HOME: configHome.path, GITHUB_TOKEN: 'ghp_MCPLEAK123' };
      expect((await runInProcess(['mcp', 'trust'], { cwd: workspace.path, env })).code).toBe(0);
      const first = await runInProcess(['run', 'tidy up', '--script', 'first.json', '--mode', 'accept-edits', '--json'], { cwd: workspace.path, env });
      expect(first.code, first.stderr).toBe(0);
      expect(jsonLines(first.stdout).find((record) => record.type === 'tool.settled')?.data).toMatchObject({ name: 'write', status: 'ok' });
      const second = await runInProcess(['run', 'again', '--script', 'second.json', '--json'], { cwd: workspace.path, env });
      expect(second.code, second.stderr).toBe(0);
      // The server started (it connected, and its module wrote into the workspace), inside the sandbox.
      expect(jsonLines(second.stdout).some((record) => record.type === 'mcp.connected'), second.stdout).toBe(true);
      const seen = await readFile(join(workspace.path, 'mcp-env.txt'), 'utf8');
      expect(seen).not.toContain('ghp_MCPLEAK123');
      expect(existsSync(planted)).toBe(false);
    } finally {
      await workspace.remove();
      await outside.remove();
      await configHome.remove();
    }
  }, 120_000);

  it('the trust prompt says where each hook runs, and names what a host hook exposes', () => {
    const project = (sandbox?: boolean): ProjectHooks => ({
      file: 'rein.config.json',
      subject: { kind: 'hooks', path: '/w/rein.config.json', digest: 'sha256:0' },
      status: 'untrusted',
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'npm test', ...(sandbox === undefined ? {} : { sandbox }) }] }] },
    });
    expect(describeProjectHooks(project())).toBe('rein.config.json asks rein to run 1 command hook(s); they run inside the bash sandbox (the workspace, no network, your environment cleared).\n  Stop: npm test');
    expect(describeProjectHooks(project(true))).toBe(describeProjectHooks(project()));
    const host = describeProjectHooks(project(false));
    expect(host).toContain('all of them ("sandbox": false) run on the host with your permissions and your environment, outside the sandbox');
    expect(host).toContain('package.json, node_modules, a Makefile) is one the model can edit');
    expect(host).toContain('  Stop: npm test   [on the host: your permissions and environment, outside the sandbox]');
  });
});
