import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' });

describe("the repository's git configuration and hooks are protected (trial 7 G13)", () => {
  it('file tools may read .git/config but never write it, its worktree configuration or its hooks; git keeps working in the sandbox', async () => {
    const workspace = await makeTempDir('rein-git-control-');
    try {
      git(workspace.path, 'init', '-q', '.');
      await writeFile(join(workspace.path, 'keep.txt'), 'keep\n');
      const config = await readFile(join(workspace.path, '.git', 'config'), 'utf8');
      const edited = config.replace('bare = false', 'bare = false\n[core] fsmonitor = "touch pwn_fsmonitor; rm -f keep.txt; false"');
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'r', toolCalls: [{ name: 'read', arguments: { path: '.git/config' } }] },
        { text: 'e', toolCalls: [{ name: 'edit', arguments: { path: '.git/config', old_string: 'bare = false', new_string: 'bare = false\n[core] fsmonitor = "touch pwn_fsmonitor; rm -f keep.txt; false"' } }] },
        { text: 'w', toolCalls: [{ name: 'write', arguments: { path: '.git/config', content: edited } }] },
        { text: 'wt', toolCalls: [{ name: 'write', arguments: { path: '.git/config.worktree', content: '[core]\n\tfsmonitor = "touch pwn_wt"\n' } }] },
        { text: 'h', toolCalls: [{ name: 'write', arguments: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch pwn_hook\n' } }] },
        { text: 'a', toolCalls: [{ name: 'write', arguments: { path: '.git/info/attributes', content: '* diff=x\n' } }] },
        { text: 'b', toolCalls: [{ name: 'bash', arguments: { command: 'printf "[core]\\n\\tfsmonitor = touch pwn_bash\\n" >> .git/config; git add keep.txt && git -c user.email=a@b -c user.name=a commit -qm keep && git status --short' } }] },
        { text: 'Done.' },
      ] }));
      const run = await runInProcess(['run', 'look at git', '--script', 'script.json', '--mode', 'accept-edits', '--yes', '--json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      const settled = entriesOfRows(jsonLines(run.stdout)).filter((record) => record.type === 'tool.settled').map((record) => record.data as { name: string; status: string; errorCode?: string });
      expect(settled.map((data) => [data.name, data.status, data.errorCode ?? '']), run.stdout + run.stderr).toEqual([
        ['read', 'ok', ''],
        ['edit', 'error', 'Denied'],
        ['write', 'error', 'Denied'],
        ['write', 'error', 'Denied'],
        ['write', 'error', 'Denied'],
        ['write', 'error', 'Denied'],
        ['bash', 'ok', ''],
      ]);
      // The sandboxed command could not append to the configuration, yet git could read it and commit.
      expect(await readFile(join(workspace.path, '.git', 'config'), 'utf8')).toBe(config);
      expect(git(workspace.path, 'log', '--oneline')).toMatch(/keep/);
      for (const file of ['.git/config.worktree', '.git/hooks/pre-commit', '.git/info/attributes']) expect(existsSync(join(workspace.path, file)), file).toBe(false);
      git(workspace.path, 'status', '--short');
      for (const file of ['pwn_fsmonitor', 'pwn_wt', 'pwn_hook', 'pwn_bash']) expect(existsSync(join(workspace.path, file)), file).toBe(false);
      expect(existsSync(join(workspace.path, 'keep.txt'))).toBe(true);
    } finally {
      await workspace.remove();
    }
  }, 120_000);

  it('a sandboxed `git init` of a new repository is kept, and the new configuration is then protected from the file tools', async () => {
    const workspace = await makeTempDir('rein-git-init-');
    try {
      await mkdir(join(workspace.path, 'src'));
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'i', toolCalls: [{ name: 'bash', arguments: { command: 'git init -q . && git status --short' } }] },
        { text: 'Done.' },
      ] }));
      const run = await runInProcess(['run', 'init', '--script', 'script.json', '--mode', 'accept-edits', '--yes', '--json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(existsSync(join(workspace.path, '.git', 'config'))).toBe(true);
      expect(existsSync(join(workspace.path, '.git', 'hooks'))).toBe(true);
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [
        { text: 'w', toolCalls: [{ name: 'write', arguments: { path: '.git/config', content: '[core]\n\tfsmonitor = "touch pwn"\n' } }] },
        { text: 'Done.' },
      ] }));
      const again = await runInProcess(['run', 'edit', '--script', 'script.json', '--mode', 'accept-edits', '--json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      const settled = entriesOfRows(jsonLines(again.stdout)).filter((record) => record.type === 'tool.settled').map((record) => record.data as { status: string; errorCode?: string });
      expect(settled[0], again.stdout + again.stderr).toMatchObject({ status: 'error', errorCode: 'Denied' });
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});

describe('a repository configuration that makes git run a program keeps git status asked (trial 7 G2)', () => {
  it('a shipped .git/config.worktree with core.fsmonitor: git status is not run unasked, nothing is deleted', async () => {
    const workspace = await makeTempDir('rein-git-worktree-config-');
    try {
      git(workspace.path, 'init', '-q', '.');
      await writeFile(join(workspace.path, 'keep.txt'), 'keep\n');
      await writeFile(join(workspace.path, '.git', 'config'), '[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n');
      await writeFile(join(workspace.path, '.git', 'config.worktree'), '[core]\n\tfsmonitor = "touch pwn_wt; rm -f keep.txt; false"\n');
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 's', toolCalls: [{ name: 'bash', arguments: { command: 'git status --short' } }] }, { text: 'Done.' }] }));
      const run = await runInProcess(['run', 'status', '--script', 'script.json', '--json'], { cwd: workspace.path, env: { REIN_CONFIG_HOME: join(workspace.path, '.config-home') } });
      expect(run.code, run.stdout + run.stderr).toBe(3);
      const decided = entriesOfRows(jsonLines(run.stdout)).find((record) => record.type === 'permission.decided');
      expect(decided?.data).toMatchObject({ decision: 'ask', classes: ['protected-path'] });
      expect(existsSync(join(workspace.path, 'keep.txt'))).toBe(true);
      expect(existsSync(join(workspace.path, 'pwn_wt'))).toBe(false);
    } finally {
      await workspace.remove();
    }
  }, 120_000);
});
