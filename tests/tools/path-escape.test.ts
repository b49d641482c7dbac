import { mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editTool } from '../../src/tools/edit.tool.js';
import { readTool } from '../../src/tools/read.tool.js';
import { writeTool } from '../../src/tools/write.tool.js';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

const secret = 'TOP-SECRET-OUTSIDE';

/** Every way out of the workspace we know of; each must be Denied and leave the outside untouched. */
const corpus: Array<[string, string, Record<string, unknown>]> = [
  ['dotdot', 'read', { path: '../outside/secret.txt' }],
  ['dotdot inside a path', 'read', { path: 'src/../../outside/secret.txt' }],
  ['absolute outside', 'read', { path: '/etc/passwd' }],
  ['absolute to the sibling', 'read', { path: '@OUTSIDE@/secret.txt' }],
  ['file symlink out', 'read', { path: 'link-out' }],
  ['symlinked parent directory', 'read', { path: 'dir-out/secret.txt' }],
  ['symlink to an absolute system file', 'read', { path: 'abs-link' }],
  ['the store directory', 'read', { path: '.rein/store.txt' }],
  ['the store through a symlink', 'read', { path: 'link-rein' }],
  ['the store through dotdot', 'read', { path: 'src/../.rein/store.txt' }],
  ['list the parent', 'list_dir', { path: '..' }],
  ['list the root', 'list_dir', { path: '/' }],
  ['list through a symlinked directory', 'list_dir', { path: 'dir-out' }],
  ['list the store', 'list_dir', { path: '.rein' }],
  ['write with dotdot', 'write', { path: '../outside/new.txt', content: 'x' }],
  ['write an absolute path', 'write', { path: '@OUTSIDE@/new.txt', content: 'x' }],
  ['write into a symlinked directory', 'write', { path: 'dir-out/new.txt', content: 'x' }],
  ['write over a symlink pointing out', 'write', { path: 'link-out', content: 'x' }],
  ['write into the store', 'write', { path: '.rein/evil.txt', content: 'x' }],
  ['write over the store directory', 'write', { path: '.rein', content: 'x' }],
  ['write with dotdot inside a path', 'write', { path: 'src/../../outside/new.txt', content: 'x' }],
  ['edit through a symlink', 'edit', { path: 'link-out', old_string: 'TOP', new_string: 'x' }],
  ['edit with dotdot', 'edit', { path: '../outside/secret.txt', old_string: 'TOP', new_string: 'x' }],
  ['hash-edit through a symlinked directory', 'edit_lines', { path: 'dir-out/secret.txt', ops: [{ op: 'delete_line', tag: '00000000' }] }],
  ['hash-edit the store', 'edit_lines', { path: '.rein/store.txt', ops: [{ op: 'delete_line', tag: '00000000' }] }],
  ['grep the parent', 'grep', { pattern: 'SECRET', path: '..' }],
  ['grep a symlinked directory', 'grep', { pattern: 'SECRET', path: 'dir-out' }],
  ['grep an absolute directory', 'grep', { pattern: 'root', path: '/etc' }],
  ['grep the store', 'grep', { pattern: 'store', path: '.rein' }],
  ['glob with dotdot', 'glob', { pattern: '../outside/*' }],
  ['glob an absolute pattern', 'glob', { pattern: '/etc/*' }],
  ['glob from the parent', 'glob', { pattern: '*', path: '..' }],
  ['glob through a symlinked directory', 'glob', { pattern: '*', path: 'dir-out' }],
  ['bash in the parent', 'bash', { command: 'cat secret.txt', cwd: '..' }],
  ['bash in a symlinked directory', 'bash', { command: 'cat secret.txt', cwd: 'dir-out' }],
  ['bash in an absolute directory', 'bash', { command: 'ls', cwd: '/tmp' }],
  ['bash in the store', 'bash', { command: 'ls', cwd: '.rein' }],
];

describe('the workspace boundary', () => {
  let root: { path: string; remove: () => Promise<void> };
  let workspace: string;
  let outside: string;
  let harness: ToolHarness;
  const outsideState = async () => {
    const names = (await readdir(outside)).sort();
    return Promise.all(names.map(async (name) => [name, await readFile(join(outside, name), 'utf8')]));
  };

  beforeAll(async () => {
    root = await makeTempDir('rein-escape-');
    workspace = join(root.path, 'ws');
    outside = join(root.path, 'outside');
    await mkdir(join(workspace, 'src'), { recursive: true });
    await mkdir(join(workspace, '.rein'));
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), `${secret}\n`);
    await writeFile(join(workspace, '.rein', 'store.txt'), 'store bytes\n');
    await writeFile(join(workspace, 'src', 'a.txt'), 'inside\n');
    await symlink(join(outside, 'secret.txt'), join(workspace, 'link-out'));
    await symlink(outside, join(workspace, 'dir-out'));
    await symlink('/etc/passwd', join(workspace, 'abs-link'));
    await symlink(join(workspace, '.rein', 'store.txt'), join(workspace, 'link-rein'));
    harness = await toolHarness(workspace);
  });
  afterAll(() => root.remove());

  it('has a corpus of at least 30 escapes', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30);
  });

  it.each(corpus)('denies %s (%s)', async (_label, tool, args) => {
    const before = await outsideState();
    const resolved = JSON.parse(JSON.stringify(args).replaceAll('@OUTSIDE@', outside)) as Record<string, unknown>;
    const result = await harness.run(tool, resolved);
    expect(result.errorCode).toBe('Denied');
    expect(result.observation).not.toContain(secret);
    expect(JSON.stringify(result.facts)).not.toContain(secret);
    expect(await outsideState()).toEqual(before);
    expect(await readFile(join(workspace, '.rein', 'store.txt'), 'utf8')).toBe('store bytes\n');
  });

  it('allows paths that climb but stay inside', async () => {
    expect((await harness.run('read', { path: 'src/../src/a.txt' })).status).toBe('ok');
  });

  it('denies a symlink swapped in after the read was checked', async () => {
    const context = { sessionId: 's', callId: 'c', workspace: harness.workspace, blobs: harness.environment.blobs, signal: new AbortController().signal, baselines: harness.state.baselines, artifacts: harness.state.artifacts, sandbox: harness.environment.sandbox, progress: () => {}, outputBudget: 16_000 };
    await writeFile(join(workspace, 'swap.txt'), 'harmless\n');
    const prepared = await readTool.prepare!({ path: 'swap.txt' }, context);
    expect(prepared.ok).toBe(true);
    await rm(join(workspace, 'swap.txt'));
    await symlink(join(outside, 'secret.txt'), join(workspace, 'swap.txt'));
    const result = await readTool.execute({ path: 'swap.txt' }, context, undefined);
    expect(result).toMatchObject({ ok: false, code: 'Denied' });
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it('denies a write whose parent directory is swapped for a symlink after the check', async () => {
    const context = { sessionId: 's', callId: 'c', workspace: harness.workspace, blobs: harness.environment.blobs, signal: new AbortController().signal, baselines: harness.state.baselines, artifacts: harness.state.artifacts, sandbox: harness.environment.sandbox, progress: () => {}, outputBudget: 16_000 };
    await mkdir(join(workspace, 'sub'));
    const prepared = await writeTool.prepare!({ path: 'sub/new.txt', content: 'x' }, context);
    if (!prepared.ok) throw new Error('prepare failed');
    await rename(join(workspace, 'sub'), join(workspace, 'sub-moved'));
    await symlink(outside, join(workspace, 'sub'));
    const before = await outsideState();
    const result = await writeTool.execute({ path: 'sub/new.txt', content: 'x' }, context, prepared.plan);
    expect(result).toMatchObject({ ok: false, code: 'Denied' });
    expect(await outsideState()).toEqual(before);
  });

  it('denies an edit whose file is swapped for a symlink after the check', async () => {
    await writeFile(join(workspace, 'victim.txt'), 'TOP line\n');
    expect((await harness.run('read', { path: 'victim.txt' })).status).toBe('ok');
    const context = { sessionId: 's', callId: 'c', workspace: harness.workspace, blobs: harness.environment.blobs, signal: new AbortController().signal, baselines: harness.state.baselines, artifacts: harness.state.artifacts, sandbox: harness.environment.sandbox, progress: () => {}, outputBudget: 16_000 };
    const prepared = await editTool.prepare!({ path: 'victim.txt', old_string: 'TOP', new_string: 'x' }, context);
    if (!prepared.ok) throw new Error(`prepare failed: ${prepared.message}`);
    await rm(join(workspace, 'victim.txt'));
    await symlink(join(outside, 'secret.txt'), join(workspace, 'victim.txt'));
    const before = await outsideState();
    const result = await editTool.execute({ path: 'victim.txt', old_string: 'TOP', new_string: 'x' }, context, prepared.plan);
    expect(result).toMatchObject({ ok: false, code: 'Denied' });
    expect(await outsideState()).toEqual(before);
  });
});
