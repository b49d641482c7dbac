import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath } from '../support/cli.js';
import { everythingPath } from '../support/mcp-servers.js';
import { makeTempDir } from '../support/temp-dir.js';

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));
const script = { turns: [{ text: 'Echoing.', toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'tty' } }] }, { text: 'Done.' }] };

describe('trusting a project MCP file at the terminal', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-trust-tty-');
    config = await makeTempDir('rein-trust-config-');
    await writeFile(join(workspace.path, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: 'node', args: [everythingPath, 'stdio'], env: { EXAMPLE_TOKEN: '${EXAMPLE_TOKEN:-none}', DOCS_LEVEL: '${OPENAI_API_KEY:-none}', MODE: 'quiet' } } } }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  });
  afterEach(async () => {
    await workspace.remove();
    await config.remove();
  });

  const inTerminal = async (send: string) => {
    const spec = { argv: [process.execPath, cliPath, 'run', 'echo', '--script', 'script.json'], cwd: workspace.path, answers: [{ expect: 'trust this file as it is now\\? \\[y/N\\]', send: `${send}\r` }], timeout: 90 };
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify(spec)], { env: { ...process.env, REIN_CONFIG_HOME: config.path, OPENAI_API_KEY: 'sk-never-shown' } });
    return JSON.parse(stdout) as { code: number | null; output: string; answered: number };
  };

  it('shows what the file would start (commands and variable names, no values) and records a yes with the digest', async () => {
    const run = await inTerminal('y');
    expect(run.answered).toBe(1);
    expect(run.output).toContain('.mcp.json asks rein to start 1 MCP server(s)');
    expect(run.output).toContain(`everything: node ${everythingPath} stdio`);
    // Which of the user's variables the server receives, by name (the trial's E35: an innocent-looking DOCS_LEVEL
    // carried OPENAI_API_KEY), and what it inherits as it is.
    expect(run.output).toContain('env EXAMPLE_TOKEN ← $EXAMPLE_TOKEN  (looks like a credential)');
    expect(run.output).toContain('env DOCS_LEVEL ← $OPENAI_API_KEY  (looks like a credential)');
    expect(run.output).toContain('env MODE (a fixed value from the file)');
    expect(run.output).toMatch(/inherits HOME, [A-Z, ]*PATH[A-Z, ]* from your environment/);
    expect(run.output).not.toContain('sk-never-shown');
    expect(run.output).toMatch(/✓(\u001b\[0m)? mcp__everything__echo/);
    expect(run.code).toBe(0);
    const trust = JSON.parse(await readFile(join(config.path, 'trust.json'), 'utf8')) as { entries: Array<{ kind: string; digest: string }> };
    expect(trust.entries).toEqual([expect.objectContaining({ kind: 'mcp', digest: expect.stringMatching(/^sha256:/) })]);
  }, 120_000);

  it('a no starts nothing and records nothing', async () => {
    const run = await inTerminal('n');
    expect(run.answered).toBe(1);
    expect(run.output).toContain('.mcp.json is not trusted');
    expect(existsSync(join(config.path, 'trust.json'))).toBe(false);
  }, 120_000);
});

describe('trusting a project plugin at the terminal (the same prompt and store as an MCP file)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  const manifest = { id: 'shout', name: 'Shout', version: '1.0.0', contributes: { tools: ['shout'] }, permissions: ['read'] };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-plugin-tty-');
    config = await makeTempDir('rein-plugin-config-');
    const folder = join(workspace.path, '.rein-plugins', 'shout');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'rein-plugin.json'), JSON.stringify({ ...manifest, main: 'index.mjs' }));
    await writeFile(join(folder, 'index.mjs'), `export default { manifest: ${JSON.stringify(manifest)}, setup: () => ({ tools: [{ name: 'shout', description: 'upper-case text', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, risk: 'read', execute: async (input) => String(input.text).toUpperCase() }] }) };\n`);
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Shouting.', toolCalls: [{ name: 'shout__shout', arguments: { text: 'quiet' } }] }, { text: 'Done.' }] }));
  });
  afterEach(async () => {
    await workspace.remove();
    await config.remove();
  });

  const inTerminal = async (send: string) => {
    const spec = { argv: [process.execPath, cliPath, 'run', 'shout', '--script', 'script.json'], cwd: workspace.path, answers: [{ expect: 'trust this plugin as it is now\\? \\[y/N\\]', send: `${send}\r` }], timeout: 90 };
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify(spec)], { env: { ...process.env, REIN_CONFIG_HOME: config.path } });
    return JSON.parse(stdout) as { code: number | null; output: string; answered: number };
  };

  it('shows what would load and with which rights, and records a yes in the trust store with the plugin\'s digest', async () => {
    const run = await inTerminal('y');
    expect(run.answered).toBe(1);
    expect(run.output).toContain('project plugin shout 1.0.0 in .rein-plugins/shout asks rein to load index.mjs into its own process');
    expect(run.output).toContain('permissions: read');
    expect(run.output).toMatch(/✓(\u001b\[0m)? shout__shout/);
    expect(run.code).toBe(0);
    const trust = JSON.parse(await readFile(join(config.path, 'trust.json'), 'utf8')) as { entries: Array<{ kind: string; name?: string; digest: string }> };
    expect(trust.entries).toEqual([expect.objectContaining({ kind: 'plugin', name: 'shout', digest: expect.stringMatching(/^b3:/) })]);
  }, 120_000);

  it('a no loads nothing and records nothing', async () => {
    const run = await inTerminal('n');
    expect(run.answered).toBe(1);
    expect(run.output).toContain('is not trusted');
    expect(existsSync(join(config.path, 'trust.json'))).toBe(false);
  }, 120_000);
});

describe('trusting the command hooks of rein.config.json at the terminal (the same prompt and store)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let config: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-hooks-tty-');
    config = await makeTempDir('rein-hooks-config-');
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `echo started > ${join(config.path, 'ran')}`, sandbox: false }] }] } }));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
  });
  afterEach(async () => {
    await workspace.remove();
    await config.remove();
  });

  it('lists every command before asking, runs them after a yes and records the section\'s digest', async () => {
    const spec = { argv: [process.execPath, cliPath, 'run', 'hi', '--script', 'script.json'], cwd: workspace.path, answers: [{ expect: 'trust these hooks as they are now\\? \\[y/N\\]', send: 'y\r' }], timeout: 90 };
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify(spec)], { env: { ...process.env, REIN_CONFIG_HOME: config.path } });
    const run = JSON.parse(stdout) as { code: number | null; output: string; answered: number };
    expect(run.answered).toBe(1);
    // It writes outside the workspace, so it says `"sandbox": false`, and the prompt says what that means.
    expect(run.output).toContain('rein.config.json asks rein to run 1 command hook(s); all of them ("sandbox": false) run on the host with your permissions and your environment, outside the sandbox');
    expect(run.output).toContain(`SessionStart: echo started > ${join(config.path, 'ran')}   [on the host: your permissions and environment, outside the sandbox]`);
    expect(run.code).toBe(0);
    expect(await readFile(join(config.path, 'ran'), 'utf8')).toBe('started\n');
    const trust = JSON.parse(await readFile(join(config.path, 'trust.json'), 'utf8')) as { entries: Array<{ kind: string; digest: string }> };
    expect(trust.entries).toEqual([expect.objectContaining({ kind: 'hooks', digest: expect.stringMatching(/^sha256:/) })]);
  }, 120_000);
});
