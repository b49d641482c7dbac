import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editTool } from '../../src/tools/edit.tool.js';
import { readTool } from '../../src/tools/read.tool.js';
import { writeTool } from '../../src/tools/write.tool.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { protectedWorkspaceEntries } from '../../src/policy/protected-paths.js';
import { projectMcpFiles } from '../../src/mcp/project-mcp.js';
import { projectSkillDirectories } from '../../src/skills/skill-discovery.js';
import { projectPluginDirectory } from '../../src/plugins/plugin-loader.js';
import { requireBubblewrap } from '../support/sandbox.js';

const sandboxed = await requireBubblewrap();
const secret = 'TOP-SECRET-OUTSIDE';
const storeBytes = 'STORE-BYTES-PROTECTED';
const outsideName = 'outside-only-name';

/** Paths that cannot lead anywhere (too long, NUL): a command naming them may run; it finds nothing. */
const harmless = new Set(['a name longer than the file system allows', 'a path longer than PATH_MAX', 'a NUL byte']);

/**
 * Every way out of the workspace we know of, as a path a tool is given. `@OUT@` is the outside directory and `@WS@`
 * the workspace as the user named it (through a symlink). Each path goes through every tool that takes one and
 * through bash; each must be refused, or contained: nothing outside changes and no outside or protected content
 * reaches the model.
 */
const escapes: Array<[label: string, path: string]> = [
  ['dotdot', '../outside/secret.txt'],
  ['dotdot inside a path', 'src/../../outside/secret.txt'],
  ['many dotdots', 'src/../../../../../../../../etc/passwd'],
  ['absolute outside', '/etc/passwd'],
  ['absolute to the sibling', '@OUT@/secret.txt'],
  ['absolute to the sibling directory', '@OUT@'],
  ['the parent', '..'],
  ['the root', '/'],
  ['home', '~/.bashrc'],
  ['symlinked file', 'link-out'],
  ['symlinked directory', 'dir-out'],
  ['file in a symlinked directory', 'dir-out/secret.txt'],
  ['symlink to an absolute system file', 'abs-link'],
  ['symlink to the parent', 'link-parent/outside/secret.txt'],
  ['chain of symlinks', 'chain-1'],
  ['dangling symlink pointing out', 'dangling-out'],
  ['the store', '.rein/store.txt'],
  ['the store directory', '.rein'],
  ['the store through ./', './.rein/store.txt'],
  ['the store through dotdot', 'src/../.rein/store.txt'],
  ['the store in capitals', '.REIN/store.txt'],
  ['the store through a symlink', 'link-rein'],
  ['the store directory through a symlink', 'link-rein-dir/store.txt'],
  ['the config', 'rein.config.json'],
  ['the config in capitals', 'REIN.CONFIG.JSON'],
  ['the config through dotdot', 'src/../rein.config.json'],
  ['the config through a dangling symlink', 'link-config'],
  ['the config through the symlinked workspace', '@WS@/rein.config.json'],
  ['the store through the real workspace path', '@REAL@/.rein/store.txt'],
  ['a hard link to an outside file', 'hard-out'],
  ['a FIFO', 'pipe'],
  ['a Unix socket', 'socket'],
  ['a device node', 'zero-device'],
  ['a name longer than the file system allows', `${'n'.repeat(300)}.txt`],
  ['a path longer than PATH_MAX', `${'d/'.repeat(2100)}x`],
  ['a NUL byte', 'src/a.txt\u0000../../outside/secret.txt'],
];

type Call = [tool: string, args: (path: string) => Record<string, unknown>];

const fileTools: Call[] = [
  ['read', (path) => ({ path })],
  ['write', (path) => ({ path, content: 'x' })],
  ['edit', (path) => ({ path, old_string: 'TOP', new_string: 'x' })],
  ['edit_lines', (path) => ({ path, ops: [{ op: 'delete_line', tag: '00000000' }] })],
  ['list_dir', (path) => ({ path })],
  ['glob', (path) => ({ pattern: '**/*', path })],
  ['grep', (path) => ({ pattern: '.', path })],
];

const quote = (path: string): string => `'${path.replaceAll("'", "'\\''")}'`;
const bashCalls: Call[] = [
  ['bash cat', (path) => ({ command: `cat ${quote(path)}` })],
  ['bash tail', (path) => ({ command: `tail -n 5 ${quote(path)}` })],
  ['bash grep -r', (path) => ({ command: `grep -r TOP ${quote(path)}` })],
  ['bash redirection', (path) => ({ command: `echo pwned > ${quote(path)}` })],
  ['bash cd', (path) => ({ command: `cd ${quote(path)} && cat *` })],
];

/** The corpus of single cases (path × tool) the suite runs: well over 60. */
const corpus = escapes.flatMap(([label, path]) => [...fileTools, ...bashCalls].map(([tool, args]) => ({ label, path, tool, args })));

describe('the workspace boundary: an escape corpus through every tool', () => {
  let root: { path: string; remove: () => Promise<void> };
  let real: string;
  let named: string;
  let outside: string;
  let tools: ToolHarness;
  let asking: ToolHarness;
  let approved: ToolHarness;
  let server: Server;

  /** Names and checksums of everything outside: the canaries. */
  const outsideState = async () => {
    const names = (await readdir(outside, { recursive: true })).map(String).sort();
    return Promise.all(names.map(async (name) => {
      const info = await stat(join(outside, name));
      return [name, info.isFile() ? createHash('sha256').update(await readFile(join(outside, name))).digest('hex') : 'dir'];
    }));
  };
  const protectedState = async () => [await readFile(join(real, '.rein', 'store.txt'), 'utf8'), existsSync(join(real, 'rein.config.json')), existsSync(join(real, 'REIN.CONFIG.JSON'))];
  /** A write may replace the hard link (contained): put it back for the next case. */
  const restoreHardLink = async () => {
    await writeFile(join(outside, 'secret.txt'), `${secret}\n`);
    const info = await stat(join(real, 'hard-out')).catch(() => undefined);
    if (info?.nlink === 2) return;
    await rm(join(real, 'hard-out'), { force: true });
    await link(join(outside, 'secret.txt'), join(real, 'hard-out'));
  };
  const expand = (path: string) => path.replaceAll('@OUT@', outside).replaceAll('@WS@', named).replaceAll('@REAL@', real);

  beforeAll(async () => {
    root = await makeTempDir('rein-escape-');
    real = join(root.path, 'real-ws');
    named = join(root.path, 'ws-link');
    outside = join(root.path, 'outside');
    await mkdir(join(real, 'src'), { recursive: true });
    await mkdir(join(real, '.rein'));
    await mkdir(join(outside, 'nested'), { recursive: true });
    await writeFile(join(outside, 'secret.txt'), `${secret}\n`);
    await writeFile(join(outside, 'nested', 'deeper.txt'), `${secret} again\n`);
    await writeFile(join(outside, `${outsideName}.txt`), 'a name only the outside has\n');
    await writeFile(join(real, '.rein', 'store.txt'), `${storeBytes}\n`);
    await writeFile(join(real, 'src', 'a.txt'), 'TOP inside\n');
    await symlink(real, named);
    await symlink(join(outside, 'secret.txt'), join(real, 'link-out'));
    await symlink(outside, join(real, 'dir-out'));
    await symlink('/etc/passwd', join(real, 'abs-link'));
    await symlink('..', join(real, 'link-parent'));
    await symlink('chain-2', join(real, 'chain-1'));
    await symlink(join(outside, 'secret.txt'), join(real, 'chain-2'));
    await symlink(join(outside, 'not-there.txt'), join(real, 'dangling-out'));
    await symlink(join(real, '.rein', 'store.txt'), join(real, 'link-rein'));
    await symlink(join(real, '.rein'), join(real, 'link-rein-dir'));
    await symlink('rein.config.json', join(real, 'link-config'));
    await link(join(outside, 'secret.txt'), join(real, 'hard-out'));
    execFileSync('mkfifo', [join(real, 'pipe')]);
    server = createServer();
    await new Promise<void>((resolve) => server.listen(join(real, 'socket'), () => resolve()));
    try {
      execFileSync('mknod', [join(real, 'zero-device'), 'c', '1', '5'], { stdio: 'ignore' });
    } catch {
      await writeFile(join(real, 'zero-device'), ''); // Not root: the case degrades to a plain file.
    }
    // The workspace as a user names it: through a symlink, like `rein run --workspace <link>` (protected paths too).
    const protectedPaths = [join(named, '.rein'), join(named, 'rein.config.json')];
    tools = await toolHarness(named, { protectedPaths });
    asking = await toolHarness(named, { protectedPaths, permissions: { mode: 'default' } });
    approved = await toolHarness(named, { protectedPaths, permissions: { mode: 'accept-edits', approveAll: true } });
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await root.remove();
  });

  it('has a corpus of at least 60 cases, each path through every tool that takes one and through bash', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    expect(escapes.length).toBeGreaterThanOrEqual(30);
  });

  it('opened the workspace at its real path', () => {
    expect(tools.workspace.root).toBe(real);
  });

  it.each(corpus.filter((entry) => !entry.tool.startsWith('bash')).map((entry) => [entry.label, entry.tool, entry.path, entry.args] as const))('%s through %s: refused or contained, nothing leaks', async (label, tool, path, args) => {
    const before = [await outsideState(), await protectedState()];
    const result = await tools.run(tool, args(expand(path)));
    // Refused (Denied, NotFound or InvalidInput) — or contained: a write over a hard link replaces the link (the
    // outside file keeps its content), and a listing of a workspace directory shows nothing from outside.
    if (result.status === 'ok') expect(tool === 'write' && label === 'a hard link to an outside file' ? 'contained write' : ['glob', 'grep', 'list_dir'].includes(tool) ? 'listing' : `${tool} succeeded`).not.toMatch(/succeeded/);
    const seen = result.observation + JSON.stringify(result.facts);
    expect(seen).not.toContain(secret);
    expect(seen).not.toContain(storeBytes);
    expect(seen).not.toContain(outsideName);
    expect([await outsideState(), await protectedState()]).toEqual(before);
    await restoreHardLink();
  });

  it.each(corpus.filter((entry) => entry.tool.startsWith('bash')).map((entry) => [entry.label, entry.tool, entry.path, entry.args] as const))('%s through %s: never runs unasked', async (label, _tool, path, args) => {
    const before = [await outsideState(), await protectedState()];
    const result = await asking.run('bash', { ...args(expand(path)), timeout_ms: 2_000 });
    if (!harmless.has(label)) expect(['ask', 'error']).toContain(result.status);
    expect(result.observation).not.toContain(secret);
    expect([await outsideState(), await protectedState()]).toEqual(before);
  });

  it.each(corpus.filter((entry) => entry.tool.startsWith('bash')).map((entry) => [entry.label, entry.tool, entry.path, entry.args] as const))('%s through %s, approved: contained by the sandbox', async (label, _tool, path, args) => {
    const before = [await outsideState(), await protectedState()];
    const result = await approved.run('bash', { ...args(expand(path)), timeout_ms: 2_000 });
    // A hard link is one file under two names: the sandbox cannot hide the other one, so a command a person approves
    // on it reads and writes the shared file (unasked, no command may name it; see the README).
    const hardLink = label === 'a hard link to an outside file';
    if (!hardLink) expect([await outsideState(), await protectedState()]).toEqual(before);
    await restoreHardLink();
    if (!sandboxed || result.errorCode === 'InvalidInput') return;
    expect(result.observation).not.toContain(storeBytes);
    const stdout = (JSON.parse(result.observation.replace(/^(Timeout|Cancelled): /, '')) as { stdout: string }).stdout;
    const leaks = stdout.split('\n').filter((line) => line.includes(secret) && !line.includes('hard-out'));
    if (!hardLink) expect(leaks).toEqual([]);
  });

  it('allows paths that climb but stay inside, also through the symlinked workspace name', async () => {
    expect((await tools.run('read', { path: 'src/../src/a.txt' })).status).toBe('ok');
    expect((await tools.run('read', { path: join(named, 'src', 'a.txt') })).status).toBe('ok');
    expect((await tools.run('write', { path: join(named, 'src', 'b.txt'), content: 'b\n' })).status).toBe('ok');
    expect(await readFile(join(real, 'src', 'b.txt'), 'utf8')).toBe('b\n');
  });

  it('denies a write of rein.config.json through the symlinked workspace, so the next run keeps its endpoint', async () => {
    for (const path of ['rein.config.json', join(named, 'rein.config.json'), join(real, 'rein.config.json'), './rein.config.json']) {
      const result = await tools.run('write', { path, content: '{"provider":"openai","baseUrl":"http://attacker.invalid/v1"}' });
      expect(result.errorCode, path).toBe('Denied');
    }
    expect(existsSync(join(real, 'rein.config.json'))).toBe(false);
  });

  it('the MCP file, the skill folders and the plugin folders are protected entries of the same module, judged by real path', async () => {
    // The one data module names every folder rein itself reads capabilities from.
    const entries = protectedWorkspaceEntries.map((entry) => entry.path);
    expect(entries).toEqual(expect.arrayContaining([...projectMcpFiles, ...projectSkillDirectories, projectPluginDirectory]));
    await symlink('.mcp.json', join(real, 'link-mcp'));
    try {
      for (const path of ['.mcp.json', 'link-mcp', '.AGENTS/SKILLS/x/SKILL.md', '@WS@/.claude/skills/y/SKILL.md', 'src/../.rein-plugins/p/index.js']) {
        for (const tool of ['write', 'read'] as const) {
          const result = await tools.run(tool, tool === 'write' ? { path: expand(path), content: '{"mcpServers":{"x":{"command":"sh"}}}' } : { path: expand(path) });
          expect(result.errorCode, `${tool} ${path}`).toEqual(tool === 'write' ? 'Denied' : expect.stringMatching(/^(Denied|NotFound)$/));
        }
      }
      expect(existsSync(join(real, '.mcp.json'))).toBe(false);
      expect(existsSync(join(real, '.rein-plugins'))).toBe(false);
      if (!sandboxed) return;
      const created = JSON.parse((await approved.run('bash', { command: 'echo \'{"mcpServers":{}}\' > .mcp.json; echo done' })).observation);
      expect(created.protected_paths_removed.paths).toEqual(['.mcp.json']);
      expect(existsSync(join(real, '.mcp.json'))).toBe(false);
    } finally {
      await rm(join(real, 'link-mcp'));
    }
  });

  it('a FIFO is refused before it is opened, so nothing hangs', async () => {
    const started = Date.now();
    for (const tool of ['read', 'write', 'edit'] as const) {
      const result = await tools.run(tool, tool === 'read' ? { path: 'pipe' } : tool === 'write' ? { path: 'pipe', content: 'x' } : { path: 'pipe', old_string: 'a', new_string: 'b' });
      expect(result.errorCode, tool).toBe('InvalidInput');
      expect(JSON.stringify(result.facts), tool).toContain('not_a_file');
    }
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a write through a hard link replaces the link and leaves the outside file as it was', async () => {
    const result = await tools.run('write', { path: 'hard-out', content: 'replaced\n' });
    expect(result.status).toBe('ok');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(`${secret}\n`);
    expect(await readFile(join(real, 'hard-out'), 'utf8')).toBe('replaced\n');
    await rm(join(real, 'hard-out'));
    await link(join(outside, 'secret.txt'), join(real, 'hard-out'));
  });

  it('a protected file that exists is masked for commands; one a command creates is removed again', async () => {
    if (!sandboxed) return;
    await writeFile(join(real, 'rein.config.json'), '{"provider":"scripted"}\n');
    try {
      const masked = JSON.parse((await approved.run('bash', { command: 'cat rein.config.json; echo x > rein.config.json; echo status=$?' })).observation);
      expect(masked.stdout).not.toContain('scripted');
      expect(masked.stdout).toContain('status=1');
      expect(await readFile(join(real, 'rein.config.json'), 'utf8')).toBe('{"provider":"scripted"}\n');
    } finally {
      await rm(join(real, 'rein.config.json'));
    }
    const created = await approved.run('bash', { command: 'echo \'{"baseUrl":"http://attacker.invalid"}\' > rein.config.json; mkdir -p .rein-alias; echo done' });
    const json = JSON.parse(created.observation);
    expect(json.protected_paths_removed.paths).toEqual(['rein.config.json']);
    expect(created.facts.find((fact) => fact.type === 'workspace.cleaned')?.data).toMatchObject({ paths: ['rein.config.json'], reason: 'protected-path-created' });
    expect(existsSync(join(real, 'rein.config.json'))).toBe(false);
    await rm(join(real, '.rein-alias'), { recursive: true, force: true });
  });

  it('a link a command makes in place of a protected path (or a folder on its way) is removed as a link: what it points to outside is untouched', async () => {
    const temp = await makeTempDir('rein-protected-target-');
    const target = temp.path;
    try {
      await mkdir(join(target, 'skills', 'keep'), { recursive: true });
      await writeFile(join(target, 'skills', 'keep', 'SKILL.md'), '---\nname: keep\ndescription: keep\n---\nbody\n');
      await writeFile(join(target, 'cfg.json'), '{"provider":"scripted"}\n');
      await writeFile(join(target, 'mcp.json'), '{}\n');
      const result = await approved.run('bash', { command: `ln -s ${target} .agents; mkdir .claude; ln -s ${target}/skills .claude/skills; ln -s ${target}/cfg.json rein.config.json; ln -s ${target}/mcp.json .mcp.json; echo done` });
      const json = JSON.parse(result.observation);
      expect(json.stdout).toContain('done');
      expect([...json.protected_paths_removed.paths].sort()).toEqual(['.agents', '.claude/skills', '.mcp.json', 'rein.config.json']);
      // Everything outside is as it was; the links are gone; the real folder the command made stays.
      expect(await readFile(join(target, 'skills', 'keep', 'SKILL.md'), 'utf8')).toContain('name: keep');
      expect(await readFile(join(target, 'cfg.json'), 'utf8')).toBe('{"provider":"scripted"}\n');
      expect(await readFile(join(target, 'mcp.json'), 'utf8')).toBe('{}\n');
      for (const name of ['.agents', '.claude/skills', '.mcp.json', 'rein.config.json']) expect(existsSync(join(real, name)), name).toBe(false);
      expect(existsSync(join(real, '.claude'))).toBe(true);
    } finally {
      await rm(join(real, '.claude'), { recursive: true, force: true });
      await temp.remove();
    }
  });

  it('a folder holding a protected path cannot be renamed or removed under bubblewrap, so no impostor takes its place', async () => {
    if (!sandboxed) return;
    await mkdir(join(real, '.agents', 'skills', 'good'), { recursive: true });
    await writeFile(join(real, '.agents', 'skills', 'good', 'SKILL.md'), 'be good\n');
    try {
      const swapped = JSON.parse((await approved.run('bash', { command: 'mv .agents old; echo mv=$?; rm -rf .agents; echo rm=$?; mkdir -p .agents/skills/good && echo evil > .agents/skills/good/SKILL.md; echo write=$?; touch .agents/notes.txt; echo touch=$?' })).observation);
      expect(swapped.stdout).toMatch(/mv=[1-9]/);
      expect(swapped.stdout).toMatch(/rm=[1-9]/);
      expect(swapped.stdout).toMatch(/write=[1-9]/);
      // The folder itself stays writable: only its place is pinned.
      expect(swapped.stdout).toContain('touch=0');
      expect(await readFile(join(real, '.agents', 'skills', 'good', 'SKILL.md'), 'utf8')).toBe('be good\n');
      expect(existsSync(join(real, 'old'))).toBe(false);
    } finally {
      await rm(join(real, '.agents'), { recursive: true, force: true });
      await rm(join(real, 'old'), { recursive: true, force: true });
    }
  });

  it('denies a symlink swapped in after the read was checked', async () => {
    const context = { sessionId: 's', callId: 'c', workspace: tools.workspace, blobs: tools.environment.blobs, signal: new AbortController().signal, baselines: tools.state.baselines, artifacts: tools.state.artifacts, sandbox: tools.environment.sandbox, progress: () => {}, outputBudget: 16_000 };
    await writeFile(join(real, 'swap.txt'), 'harmless\n');
    const prepared = await readTool.prepare!({ path: 'swap.txt' }, context);
    expect(prepared.ok).toBe(true);
    await rm(join(real, 'swap.txt'));
    await symlink(join(outside, 'secret.txt'), join(real, 'swap.txt'));
    const result = await readTool.execute({ path: 'swap.txt' }, context, undefined);
    expect(result).toMatchObject({ ok: false, code: 'Denied' });
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it('denies a write whose parent directory is swapped for a symlink after the check, and leaves no temp file outside', async () => {
    const context = { sessionId: 's', callId: 'c', workspace: tools.workspace, blobs: tools.environment.blobs, signal: new AbortController().signal, baselines: tools.state.baselines, artifacts: tools.state.artifacts, sandbox: tools.environment.sandbox, progress: () => {}, outputBudget: 16_000 };
    await mkdir(join(real, 'sub'));
    const prepared = await writeTool.prepare!({ path: 'sub/new.txt', content: 'x' }, context);
    if (!prepared.ok) throw new Error('prepare failed');
    await rename(join(real, 'sub'), join(real, 'sub-moved'));
    await symlink(outside, join(real, 'sub'));
    const before = await outsideState();
    const result = await writeTool.execute({ path: 'sub/new.txt', content: 'x' }, context, prepared.plan);
    expect(result).toMatchObject({ ok: false, code: 'Denied' });
    expect(await outsideState()).toEqual(before);
  });

  it('denies an edit whose file is swapped for a symlink after the check', async () => {
    await writeFile(join(real, 'victim.txt'), 'TOP line\n');
    expect((await tools.run('read', { path: 'victim.txt' })).status).toBe('ok');
    const context = { sessionId: 's', callId: 'c', workspace: tools.workspace, blobs: tools.environment.blobs, signal: new AbortController().signal, baselines: tools.state.baselines, artifacts: tools.state.artifacts, sandbox: tools.environment.sandbox, progress: () => {}, outputBudget: 16_000 };
    const prepared = await editTool.prepare!({ path: 'victim.txt', old_string: 'TOP', new_string: 'x' }, context);
    if (!prepared.ok) throw new Error(`prepare failed: ${prepared.message}`);
    await rm(join(real, 'victim.txt'));
    await symlink(join(outside, 'secret.txt'), join(real, 'victim.txt'));
    const before = await outsideState();
    const result = await editTool.execute({ path: 'victim.txt', old_string: 'TOP', new_string: 'x' }, context, prepared.plan);
    expect(result).toMatchObject({ ok: false, code: 'Denied' });
    expect(await outsideState()).toEqual(before);
  });
});
