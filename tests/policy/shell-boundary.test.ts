import { execFileSync } from 'node:child_process';
import { link, mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedPathsOf } from '../../src/policy/protected-paths.js';
import { classifyShellCommand } from '../../src/policy/shell-classify.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('shell classification by real path', () => {
  let root: { path: string; remove: () => Promise<void> };
  let workspace: string;
  let home: string;
  const classify = (command: string, cwd = workspace) => classifyShellCommand(command, { workspace, cwd, protectedPaths: protectedPathsOf(workspace), home });

  beforeAll(async () => {
    root = await makeTempDir('rein-classify-');
    const real = await realpath(root.path);
    workspace = join(real, 'ws');
    home = join(real, 'home');
    await mkdir(join(workspace, 'src'), { recursive: true });
    await mkdir(join(workspace, '.rein', 'streams'), { recursive: true });
    await mkdir(join(real, 'outside'));
    await mkdir(home);
    await writeFile(join(real, 'outside', 'secret'), 'x');
    await writeFile(join(home, '.bashrc'), 'x');
    await writeFile(join(workspace, 'src', 'a.txt'), 'a');
    await symlink(join(real, 'outside', 'secret'), join(workspace, 'link_secret'));
    await symlink('..', join(workspace, 'link_parent'));
    await symlink(join(real, 'outside'), join(workspace, 'link_out'));
    await symlink(join(workspace, 'src'), join(workspace, 'link_in'));
    await link(join(real, 'outside', 'secret'), join(workspace, 'hard'));
    execFileSync('mkfifo', [join(workspace, 'fifo')]);
  });
  afterAll(() => root.remove());

  it.each([
    ['cat link_secret', 'outside-workspace'],
    ['tail link_parent/outside/secret', 'outside-workspace'],
    ['grep -r X link_out', 'outside-workspace'],
    ['cat $HOME/.bashrc', 'outside-workspace'],
    ['cat ${HOME}/.bashrc', 'outside-workspace'],
    ['cat ~/.bashrc', 'outside-workspace'],
    ['cat ~root/.ssh/id_rsa', 'outside-workspace'],
    ['D=/etc; cat $D/passwd', 'outside-workspace'],
    ['export D=..; ls $D', 'outside-workspace'],
    ['cd src && cat ../../outside/secret', 'outside-workspace'],
    ['cd .. && ls', 'outside-workspace'],
    ['cat link_*', 'outside-workspace'],
    ['cat hard', 'outside-workspace'],
    ['cat fifo', 'outside-workspace'],
    ['head --file=../outside/secret', 'outside-workspace'],
    ['cat rein.config.json', 'protected-path'],
    ['cat REIN.CONFIG.JSON', 'protected-path'],
    ['ls .rein/streams', 'protected-path'],
    ['cat src/../.rein/x', 'protected-path'],
    ['echo {} > rein.config.json', 'protected-path'],
  ])('%s → %s, never read-only', (command, expected) => {
    const result = classify(command);
    expect(result.classes).toContain(expected);
    expect(result.outsidePaths?.length).toBeGreaterThan(0);
  });

  it.each(['cat src/a.txt', 'cat link_in/a.txt', 'ls -la', 'grep -rn TODO src', 'cat link_[i]n/a.txt', 'wc -l src/*', 'cd src && cat a.txt', 'echo $PATH'])('%s stays read-only', (command) => {
    expect(classify(command).classes.filter((name) => name !== 'chained')).toEqual(['read-only']);
  });

  it('judges from the working directory it is given', () => {
    expect(classify('cat a.txt', join(workspace, 'src')).classes).toEqual(['read-only']);
    expect(classify('cat ../../outside/secret', join(workspace, 'src')).classes).toContain('outside-workspace');
  });
});
