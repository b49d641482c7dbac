import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitConfigHazard } from '../../src/policy/git-config-hazard.js';
import { GitConfigSyntaxError, gitConfigName, parseGitConfig } from '../../src/policy/git-config-parse.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

/*
 * Trial 6 F5: `.git/config` is a workspace file the model can edit; `core.fsmonitor` set there made the read-only
 * `git status` run any program unasked. A git command whose repository configuration (inside the workspace) can run
 * a program is `protected-path`: never allowed automatically.
 */
let dir: { path: string; remove: () => Promise<void> };
let root: string;
beforeEach(async () => {
  dir = await makeTempDir('rein-git-hazard-');
  root = await realpath(dir.path);
  execFileSync('git', ['init', '-q', root]);
});
afterEach(() => dir.remove());

const classes = (command: string, cwd = root) => classifyShellCommand(command, { workspace: root, cwd }).classes;

describe('git commands and the repository configuration the workspace holds', () => {
  it('a plain repository keeps git status read-only; core.fsmonitor, a diff driver, a filter or an include makes it protected-path', async () => {
    expect(classes('git status')).toEqual(['read-only']);
    expect(classes('git diff --stat')).toEqual(['read-only']);
    const plain = execFileSync('git', ['config', '--list', '--local'], { cwd: root, encoding: 'utf8' });
    expect(plain).toContain('core.bare=false');
    for (const setting of ['\tfsmonitor = "touch pwn; false"', '\tFSMonitor=touch pwn', '[diff "x"]\n\ttextconv = sh pwn', '[filter "x"]\n\tclean = sh pwn', '[include]\n\tpath = ../evil.cfg', '[diff]\n\texternal = ./pwn', '[alias]\n\tp = push']) {
      await writeFile(join(root, '.git/config'), `[core]\n\trepositoryformatversion = 0\n${setting}\n`);
      expect(classes('git status'), setting).toEqual(['protected-path']);
      expect(classes('git log -p'), setting).toEqual(['protected-path']);
      expect(gitConfigHazard(root, root), setting).toMatch(/\.git\/config/);
    }
  });

  it('the real attack: git really runs core.fsmonitor from .git/config, and rein no longer calls that read-only', async () => {
    await writeFile(join(root, 'keep.txt'), 'keep\n');
    execFileSync('git', ['config', 'core.fsmonitor', 'touch pwn_fsmonitor; false'], { cwd: root });
    execFileSync('git', ['status', '--short'], { cwd: root, stdio: 'ignore' });
    expect(execFileSync('ls', [root], { encoding: 'utf8' })).toContain('pwn_fsmonitor');
    expect(classes('git status --short')).toEqual(['protected-path']);
  });

  it('a subfolder finds the nearest repository; a GIT_* variable or a linked .git is never read-only', async () => {
    await mkdir(join(root, 'sub/deeper'), { recursive: true });
    expect(classes('git status', join(root, 'sub/deeper'))).toEqual(['read-only']);
    expect(classes('GIT_DIR=evil git status')).toEqual(['protected-path']);
    expect(classes('env GIT_CONFIG_GLOBAL=./x git status')).toEqual(['protected-path']);
    expect(classes('export GIT_DIR=evil; git status')).toContain('protected-path');
    await mkdir(join(root, 'sub/nested'));
    await mkdir(join(root, 'elsewhere/.git'), { recursive: true });
    await writeFile(join(root, 'elsewhere/.git/config'), '[core]\n\tfsmonitor = sh pwn\n');
    await writeFile(join(root, 'sub/nested/.git'), 'gitdir: ../../elsewhere/.git\n');
    expect(classes('git status', join(root, 'sub/nested'))).toEqual(['protected-path']);
    await mkdir(join(root, 'linked'));
    await symlink(join(root, 'elsewhere/.git'), join(root, 'linked/.git'));
    expect(classes('git status', join(root, 'linked'))).toEqual(['protected-path']);
  });

  it('trial 7 G2: a key on the section line, a continuation, odd case, a quoted subsection, config.worktree — each is seen', async () => {
    const forms = [
      '[core] fsmonitor = "touch pwn; false"',
      '[core]\n\tFsMonitor = touch pwn',
      '[CORE]fsmonitor=touch pwn',
      '[core]\n\tfsmonitor = touch \\\n pwn',
      '[diff "x"] textconv = sh pwn',
      '[diff.x]\n\ttextconv = sh pwn',
      '[core] ; comment\n\tsshCommand = sh pwn',
      '[IncludeIf "gitdir:/"]\n\tpath = ../evil.cfg',
      '[core]\n\tbare = false # [alias]\n[alias] p = push',
    ];
    for (const form of forms) {
      await writeFile(join(root, '.git/config'), `[core]\n\trepositoryformatversion = 0\n${form}\n`);
      expect(classes('git status'), form).toEqual(['protected-path']);
    }
    // Text git would refuse is never called read-only either.
    for (const broken of ['[core\n\tbare = false', '[core]\n\tbare = "unclosed', '[core]\n\t= x', 'bare = false', '[core]\n\tx = a\\q']) {
      await writeFile(join(root, '.git/config'), broken);
      expect(classes('git status'), broken).toEqual(['protected-path']);
    }
    await writeFile(join(root, '.git/config'), '[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n');
    expect(classes('git status')).toEqual(['read-only']);
    await writeFile(join(root, '.git/config.worktree'), '[core]\n\tfsmonitor = "touch pwn_wt; false"\n');
    expect(classes('git status')).toEqual(['protected-path']);
    expect(gitConfigHazard(root, root)).toMatch(/config\.worktree/);
  });

  it('property: whatever the text, when rein reads it, git reads the same keys; a key git would run keeps git commands asked', () => {
    const pieces = fc.constantFrom('[core]', '[core] ', '[Core "Sub"]', '[core.Sub]', '[diff "x"]', '[alias]', '[include]', '[remote "o"]', 'bare = false', 'fsmonitor = x', 'FSMonitor', 'textconv=z', 'url = u # c', 'path = "a;b"', 'x = a\\', 'y = "q', '; comment', '# c', '\t', ' ', '\n', '\n', '\r\n', '"', '\\', '=', ']', '[', 'name', 'x.y');
    const program = /^(?:fsmonitor|pager|external|textconv|clean|smudge|process|driver|hookspath|sshcommand|gitproxy|askpass|editor|helper|uploadpack|receivepack|difffilter|browser|.*command|.*cmd|.*program|.*hook)$/;
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string({ maxLength: 6 })), { maxLength: 14 }), (parts) => {
        const text = parts.join('');
        const file = join(root, 'probe.cfg');
        writeFileSync(file, text);
        let ours: string[] | undefined;
        try {
          ours = parseGitConfig(text).map(gitConfigName);
        } catch (error) {
          expect(error).toBeInstanceOf(GitConfigSyntaxError);
        }
        let theirs: string[] | undefined;
        try {
          theirs = execFileSync('git', ['config', '--file', file, '--list', '--name-only', '--null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\0').filter(Boolean);
        } catch {
          theirs = undefined;
        }
        // rein may refuse what git reads (it then fails closed), never the other way round, and never read other keys.
        if (ours !== undefined) expect(theirs, JSON.stringify(text)).toEqual(ours);
        writeFileSync(join(root, '.git/config'), text);
        const risky = theirs === undefined || theirs.some((name) => program.test(name.slice(name.lastIndexOf('.') + 1)) || /^(?:include|includeif|alias|pager)\./.test(name));
        if (risky || ours === undefined) expect(gitConfigHazard(root, root), JSON.stringify(text)).toBeDefined();
      }),
      { numRuns: propertyRuns(150) },
    );
  });
});
