import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

const bashTurn = (commands: string[]) => ({ text: 'Running.', toolCalls: commands.map((command) => ({ name: 'bash', arguments: { command } })) });

describe('what a permission rule forbids does not run, however the command is spelled or the session resumed', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-permission-holds-');
  });
  afterEach(() => workspace.remove());
  const at = (name: string) => join(workspace.path, name);

  it('--deny "bash:rm *" with --yes keeps every file, whichever spelling of rm the model uses (D18)', async () => {
    const spellings = ['/bin/rm f2', 'command rm f3', 'env rm f4', 'echo f5 | xargs rm', "bash -c 'rm f6'", 'x=rm; $x f7', 'nice rm f8', 'time rm f9', 'exec rm f10', '(rm f11)', '{ rm f12; }', 'timeout 5 rm f13', 'rm f1'];
    for (let index = 1; index <= 13; index++) await writeFile(at(`f${index}`), 'keep\n');
    await writeFile(at('script.json'), JSON.stringify({ turns: [bashTurn(spellings), { text: 'Done.' }] }));
    const run = await runCli(['run', 'clean up', '--script', 'script.json', '--yes', '--deny', 'bash:rm *'], { cwd: workspace.path });
    expect(run.code, run.stderr).toBe(0);
    for (let index = 1; index <= 13; index++) expect(existsSync(at(`f${index}`)), `f${index}`).toBe(true);
    expect(run.stdout.match(/Denied/g)?.length).toBe(spellings.length);
  });

  it('a sed script that runs a command is asked, not run, in default mode (D20)', async () => {
    await writeFile(at('a.txt'), 'a\n');
    await writeFile(at('script.json'), JSON.stringify({ turns: [bashTurn(["sed -n '1e touch pwned-e' a.txt", "sed -n '1w pwned-w' a.txt", 'sed -n 1p a.txt']), { text: 'Done.' }] }));
    const run = await runCli(['run', 'read it', '--script', 'script.json'], { cwd: workspace.path });
    expect(run.code).toBe(3);
    expect(existsSync(at('pwned-e'))).toBe(false);
    expect(existsSync(at('pwned-w'))).toBe(false);
    expect(run.stdout).toMatch(/\? bash sed -n '1e touch pwned-e' a\.txt/);
  });
});
