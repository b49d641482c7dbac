import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/* Issue 30 E: the smaller things a new user hit with the reading commands and scripts. */
describe('reading commands and scripts, the smaller edges', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let outside: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path, REIN_STORE: undefined } });
  beforeEach(async () => {
    workspace = await makeTempDir('rein-edges-');
    outside = await makeTempDir('rein-edges-outside-');
  });
  afterEach(async () => {
    await workspace.remove();
    await outside.remove();
  });

  it('rein sessions --store <typo> is STORE_NOT_FOUND; a file there is the same, not ENOTDIR; a fresh workspace has no sessions', async () => {
    const typo = await cli(['sessions', '--store', join(workspace.path, 'no-such-store')]);
    expect([typo.code, typo.stderr]).toEqual([1, expect.stringMatching(/^rein: STORE_NOT_FOUND: no store at .*no-such-store: the directory does not exist/)]);
    await writeFile(join(workspace.path, 'afile'), 'x');
    const file = await cli(['sessions', '--store', join(workspace.path, 'afile')]);
    expect([file.code, file.stderr]).toEqual([1, expect.stringMatching(/^rein: STORE_NOT_FOUND: no store at .*afile: it is a file, not a store directory\n$/)]);
    expect(file.stderr).not.toContain('ENOTDIR');
    expect((await cli(['show', 's-1', '--store', join(workspace.path, 'no-such-store')])).stderr).toContain('STORE_NOT_FOUND');
    expect(await cli(['sessions'])).toMatchObject({ code: 0, stdout: 'no sessions\n' });
  });

  it('reading commands work with a broken rein.config.json: they warn and read the default store', async () => {
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const run = await cli(['run', 'x', '--script', 'script.json']);
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    await writeFile(join(workspace.path, 'rein.config.json'), '{ "store": "elsewhere", oops }');
    const listed = await cli(['sessions']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stderr).toMatch(/^rein: warning: rein\.config\.json is not valid JSON \(at line 1, column \d+\); reading the default store /);
    expect((await cli(['show', id])).code).toBe(0);
    expect((await cli(['trace', id])).code).toBe(0);
    // A command that would write still refuses it.
    expect((await cli(['run', 'x', '--script', 'script.json'])).code).toBe(2);
  });

  it('rein show prints a command\'s output as its lines, not a JSON fragment cut at 100 characters', async () => {
    const long = 'x'.repeat(150);
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Printing.', toolCalls: [{ name: 'bash', arguments: { command: `echo first; echo ${long}; echo oops >&2` } }] }, { text: 'Done.' }] }));
    const run = await cli(['run', 'x', '--script', 'script.json', '--yes']);
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const shown = (await cli(['show', id])).stdout;
    expect(shown).toMatch(new RegExp(`✓ bash \\(exit 0, \\d+ ms\\): echo first; echo x+…\\n {2}│ first\\n {2}│ ${long}\\n {2}! oops\\n`));
    expect(shown).not.toContain('{"command"');
  });

  it('{"turns": []} is SCRIPT_INVALID before anything runs or is recorded', async () => {
    await writeFile(join(workspace.path, 'empty.json'), JSON.stringify({ turns: [] }));
    const run = await cli(['run', 'x', '--script', 'empty.json']);
    expect([run.code, run.stderr]).toEqual([2, expect.stringContaining('SCRIPT_INVALID: ') ]);
    expect(run.stderr).toContain('turns: a script needs at least one turn');
    expect((await cli(['sessions'])).stdout).toBe('no sessions\n');
  });

  it('a script rein.config.json names stays inside the workspace, and no parse error quotes a file\'s content', async () => {
    const secret = join(outside.path, 'secret.txt');
    await writeFile(secret, 'root:x:0:0:TOPSECRET-VALUE\n');
    for (const named of [secret, '../' + join('..', outside.path, 'secret.txt')]) {
      await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ provider: 'scripted', script: named }));
      const run = await cli(['run', 'x']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('SCRIPT_INVALID');
      expect(run.stderr).toContain('is outside the workspace');
      expect(run.stderr).not.toContain('TOPSECRET');
    }
    // A broken script inside the workspace: where it breaks, not what it says.
    await writeFile(join(workspace.path, 'broken.json'), 'TOPSECRET-VALUE is not json');
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ provider: 'scripted', script: 'broken.json' }));
    const broken = await cli(['run', 'x']);
    expect(broken.stderr).toMatch(/SCRIPT_INVALID: .*broken\.json is not valid JSON \(at line 1, column 1\)/);
    expect(broken.stderr).not.toContain('TOPSECRET');
    // --script names a file the user chose: anywhere.
    await writeFile(join(outside.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    expect((await cli(['run', 'x', '--script', join(outside.path, 'script.json')])).code).toBe(0);
  });
});
