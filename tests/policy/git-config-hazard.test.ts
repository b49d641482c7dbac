import { execFileSync } from 'node:child_process';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitConfigHazard } from '../../src/policy/git-config-hazard.js';
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

  it('any configuration text: read-only only when no key that runs a program and no include is in it', () => {
    const risky = /^\s*(fsmonitor|pager|external|textconv|command|clean|smudge|process|driver|hookspath|sshcommand|gitproxy|askpass|editor|helper|program)\s*=|^\s*\[\s*(include|alias)/im;
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom('[core]', '\tbare = false', '\tfsmonitor = x', '[include]', '[alias]', '\tpath = y', '\tpager = less', '[remote "o"]', '\turl = u', '\tTextConv=z'), fc.string({ maxLength: 20 })), { maxLength: 8 }), (lines) => {
        const text = lines.join('\n');
        execFileSync('sh', ['-c', 'cat > "$1"', 'sh', join(root, '.git/config')], { input: text });
        expect(gitConfigHazard(root, root) !== undefined).toBe(risky.test(text));
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});
