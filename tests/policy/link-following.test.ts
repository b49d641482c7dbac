import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedPathsOf } from '../../src/policy/protected-paths.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { propertyRuns } from '../support/temp-dir.js';
import { makeTempDir } from '../support/temp-dir.js';

const ripgrepDirectory = dirname((createRequire(import.meta.url)('@vscode/ripgrep') as { rgPath: string }).rgPath);

/** The regular files under `directory` (links not followed), for finding what a copying command brought in. */
const regularFiles = (directory: string): string[] =>
  readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    const info = lstatSync(path);
    return info.isDirectory() ? regularFiles(path) : info.isFile() ? [path] : [];
  });

describe('commands that follow symbolic links as they walk a tree', () => {
  let root: { path: string; remove: () => Promise<void> };
  let workspace: string;
  // Written outside the workspace: the content of a file and the name of another, reached only through links.
  const token = `SECRET${randomBytes(6).toString('hex')}`;
  const classify = (command: string) => classifyShellCommand(command, { workspace, cwd: workspace, protectedPaths: protectedPathsOf(workspace) });

  beforeAll(async () => {
    root = await makeTempDir('rein-follow-');
    const real = await realpath(root.path);
    workspace = join(real, 'ws');
    await mkdir(join(workspace, 'src'), { recursive: true });
    await mkdir(join(real, 'outside'));
    await writeFile(join(real, 'outside', 'secret.txt'), `${token}\n`);
    await writeFile(join(real, 'outside', `${token}.name`), 'x\n');
    await writeFile(join(workspace, 'src', 'a.txt'), 'hello\n');
    await symlink(join(real, 'outside', 'secret.txt'), join(workspace, 'evil'));
    await symlink('../outside', join(workspace, 'evildir'));
    // A directory holding a link out (named by no command below), and one with a regular file of the same name.
    await mkdir(join(workspace, 'nest'));
    await symlink(join(real, 'outside', 'secret.txt'), join(workspace, 'nest', 'inner'));
    await mkdir(join(workspace, 'mirror'));
    await writeFile(join(workspace, 'mirror', 'inner'), 'other\n');
  });
  afterAll(() => root.remove());

  /** Run `command` for real in the workspace (no sandbox) and say whether anything from outside reached its output or a file it made. */
  const leaks = (command: string): boolean => {
    const before = new Set(regularFiles(workspace));
    let output = '';
    try {
      output = execFileSync('/bin/bash', ['-c', command], { cwd: workspace, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000, env: { ...process.env, PATH: `${ripgrepDirectory}:${process.env.PATH}` } });
    } catch (error) {
      output = String((error as { stdout?: unknown }).stdout ?? '');
    }
    const made = regularFiles(workspace).filter((path) => !before.has(path));
    const copied = made.some((path) => readFileSync(path).includes(token));
    for (const path of made) rmSync(path, { force: true });
    for (const name of readdirSync(workspace)) if (name.startsWith('copy')) rmSync(join(workspace, name), { recursive: true, force: true });
    return output.includes(token) || copied;
  };

  const following = ['grep -R SECRET .', 'grep -nR SECRET', 'grep --dereference-recursive SECRET .', 'find -L . -name "*.name"', 'find . -follow', 'du -L -a', 'du -a --dereference .', 'ls -RL', 'ls -R -L .', 'rg -L SECRET', 'rg --follow SECRET', 'cp -rL nest copy', 'cp -a --dereference nest copy', 'tar -chf copy.tar nest', 'tar chf copy.tar src nest', 'zip -q -0 -r copy.zip nest', 'diff -r mirror nest'];
  const ordinary = ['grep -r SECRET .', 'grep -rn SECRET', 'find .', 'find . -name "*.name"', 'du -a', 'ls -R', 'ls -laR .', 'rg SECRET', 'cp -r nest copy', 'tar -cf copy.tar nest', 'zip -q -0 -r -y copy.zip nest', 'diff -r --no-dereference mirror nest', 'cat src/a.txt'];

  it.each(following)('`%s` reads through a link out of the workspace, and is classed outside-workspace', (command) => {
    expect(leaks(command), 'the real command reached outside (or this test proves nothing)').toBe(true);
    const result = classify(command);
    expect(result.classes).toContain('outside-workspace');
    expect(result.classes).not.toContain('read-only');
    expect(result.outsidePaths?.some((word) => word.includes('follows symbolic links'))).toBe(true);
  });

  it.each(ordinary)('`%s` does not follow the links it meets: nothing leaks and it is not outside-workspace', (command) => {
    expect(leaks(command)).toBe(false);
    expect(classify(command).classes).not.toContain('outside-workspace');
  });

  it('ordinary recursive reads stay read-only, so they still run unasked', () => {
    for (const command of ['grep -r SECRET .', 'grep -rn SECRET', 'find .', 'du -a', 'ls -R', 'rg SECRET']) expect(classify(command).classes, command).toEqual(['read-only']);
  });

  const harmless = (letters: string) => fc.subarray([...letters]).chain((picked) => fc.shuffledSubarray(picked, { minLength: picked.length }));
  const wrapper = fc.constantFrom('', 'env ', 'timeout 5 ', 'nice ', 'command ', 'LC_ALL=C ');
  const target = fc.constantFrom('', '.', 'src', './src');

  it('a link-following option in any cluster, order, spelling or wrapper is outside-workspace (property)', () => {
    const cases = fc.oneof(
      fc.tuple(harmless('nicHlw'), fc.nat()).map(([others, at]) => `grep -${[...others.slice(0, at % (others.length + 1)), 'R', ...others.slice(at % (others.length + 1))].join('')} x`),
      fc.constantFrom('--dereference-recursive', '--deref', '--dereference-r').map((option) => `grep ${option} x`),
      harmless('nicw').map((others) => `rg -${[...others, 'L'].join('')} x`),
      fc.constantFrom('--follow', '--fol').map((option) => `rg ${option} x`),
      fc.constantFrom('find -L', 'find . -follow', 'find -L . -type f'),
      harmless('ahsc').map((others) => `du -${['L', ...others].join('')}`),
      harmless('la1').map((others) => `ls -${[...others, 'R', 'L'].join('')}`),
      harmless('vp').map((others) => `cp -${['r', ...others, 'L'].join('')} a b`),
      harmless('cvz').map((others) => `tar -${[...others, 'h', 'f'].join('')} out.tar`),
      harmless('q9').map((others) => `zip -${[...others, 'r'].join('')} out.zip`),
      fc.constantFrom('diff -r a b', 'diff -ru a b', 'diff --recursive a b', 'tree -l', 'chown -RL me x'),
    );
    fc.assert(
      fc.property(wrapper, cases, target, (prefix, command, path) => {
        const result = classify(`${prefix}${command} ${path}`.trim());
        expect(result.classes).toContain('outside-workspace');
        expect(result.classes).not.toContain('read-only');
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('the same commands without a link-following option keep their class (property)', () => {
    const cases = fc.oneof(
      harmless('nicHlwr').map((others) => `grep ${others.length > 0 ? `-${others.join('')} ` : ''}x`),
      harmless('nicw').map((others) => `rg ${others.length > 0 ? `-${others.join('')} ` : ''}x`),
      fc.constantFrom('find', 'find . -type f', 'find -H . -name x', 'find . -exec grep -L x {} +'),
      harmless('ahsc').map((others) => `du ${others.length > 0 ? `-${others.join('')}` : ''}`),
      harmless('la1RH').map((others) => `ls ${others.length > 0 ? `-${others.join('')}` : ''}`),
    );
    fc.assert(
      fc.property(wrapper, cases, target, (prefix, command, path) => {
        const result = classify(`${prefix}${command} ${path}`.trim());
        expect(result.classes).not.toContain('outside-workspace');
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
