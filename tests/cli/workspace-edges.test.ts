import { execFileSync } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

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
