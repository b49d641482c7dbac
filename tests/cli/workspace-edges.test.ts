import { execFileSync } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { requireBubblewrap } from '../support/sandbox.js';

/* Issue 30 E: where rein works when started inside a repository, what its hints approve, and rein worker's lease. */
describe('workspace, hints and flags', () => {
  let home: { path: string; remove: () => Promise<void> };
  let repo: string;
  beforeEach(async () => {
    home = await makeTempDir('rein-ws-home-');
    repo = join(await realpath(home.path), 'project');
    await mkdir(join(repo, 'src', 'deep'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    await writeFile(join(repo, 'script.json'), JSON.stringify({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'src/add.js', content: 'x\n' } }] }, { text: 'Done.' }] }));
  });
  afterEach(() => home.remove());

  it('inside a git repository the workspace is its root, and run says so; --workspace . keeps the folder', async () => {
    const cwd = join(repo, 'src', 'deep');
    const run = await runInProcess(['run', 'write it', '--script', '../../script.json', '--approve', 'write'], { cwd, env: { HOME: home.path } });
    expect(run.stderr).toContain(`rein: workspace ${repo}: the root of the git repository you are in (--workspace . for this folder only)`);
    expect(run.code).toBe(0);
    // The file went where the model meant it (the repository's src/add.js), the store is the repository's.
    expect(execFileSync('cat', [join(repo, 'src', 'add.js')], { encoding: 'utf8' })).toBe('x\n');
    const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: join(repo, 'src'), env: { HOME: home.path } })).stdout);
    expect(listed).toHaveLength(1);
    const here = await runInProcess(['sessions'], { cwd, env: { HOME: home.path } });
    expect(here.stderr).toBe('');
    const local = await runInProcess(['sessions', '--workspace', '.'], { cwd, env: { HOME: home.path } });
    expect(local.stdout).toBe('no sessions\n');
  });

  it('a question about a file tool is answered by a rule naming its path, and the printed hint is that rule', async () => {
    const run = await runInProcess(['run', 'write it', '--script', 'script.json'], { cwd: repo, env: { HOME: home.path } });
    expect(run.code).toBe(3);
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    expect(run.stdout).toContain(`answer with: rein resume ${id} --approve write:src/add.js (or --yes)`);
    const resumed = await runInProcess(['resume', id, '--approve', 'write:src/add.js'], { cwd: repo, env: { HOME: home.path } });
    expect(resumed.code).toBe(0);
  });

  it('rein worker --lease-ms takes at least a second, before anything else is checked', async () => {
    const short = await runInProcess(['worker', '--lease-ms', '5'], { cwd: repo, env: { HOME: home.path } });
    expect([short.code, short.stderr]).toEqual([2, 'rein: USAGE: --lease-ms must be a whole number of milliseconds, at least 1000 (a lease is renewed every third of it), got "5"\n']);
  });
});

describe('a HOME that does not exist (issue 30 E)', () => {
  it('does not make bubblewrap fail: commands run sandboxed with an empty home of their own', async () => {
    if (!(await requireBubblewrap())) return;
    const workspace = await makeTempDir('rein-no-home-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Home?', toolCalls: [{ name: 'bash', arguments: { command: 'test -d "$HOME" && echo home-ok; ls -A "$HOME" | wc -l' } }] }, { text: 'Done.' }] }));
      // Under a read-only system folder: bubblewrap cannot make a mount point there.
      const env = { HOME: '/usr/local/rein-no-such-home' };
      const probe = JSON.parse((await runInProcess(['sandbox', '--json'], { cwd: workspace.path, env })).stdout) as { enforcement: string; reason?: string };
      expect(probe).toMatchObject({ enforcement: 'bubblewrap' });
      const run = await runInProcess(['run', 'look home', '--script', 'script.json', '--yes'], { cwd: workspace.path, env });
      expect(run.stdout).toContain('sandbox: bubblewrap');
      const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const shown = (await runInProcess(['show', id], { cwd: workspace.path, env })).stdout;
      expect(shown).toMatch(/│ home-ok\n {2}│ 0\n/);
    } finally {
      await workspace.remove();
    }
  });
});
