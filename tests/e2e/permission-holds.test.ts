import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
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
    const run = await runInProcess(['run', 'clean up', '--script', 'script.json', '--yes', '--deny', 'bash:rm *'], { cwd: workspace.path });
    expect(run.code, run.stderr).toBe(0);
    for (let index = 1; index <= 13; index++) expect(existsSync(at(`f${index}`)), `f${index}`).toBe(true);
    expect(run.stdout.match(/Denied/g)?.length).toBe(spellings.length);
  });

  it('a sed script that runs a command is asked, not run, in default mode (D20)', async () => {
    await writeFile(at('a.txt'), 'a\n');
    await writeFile(at('script.json'), JSON.stringify({ turns: [bashTurn(["sed -n '1e touch pwned-e' a.txt", "sed -n '1w pwned-w' a.txt", 'sed -n 1p a.txt']), { text: 'Done.' }] }));
    const run = await runInProcess(['run', 'read it', '--script', 'script.json'], { cwd: workspace.path });
    expect(run.code).toBe(3);
    expect(existsSync(at('pwned-e'))).toBe(false);
    expect(existsSync(at('pwned-w'))).toBe(false);
    expect(run.stdout).toMatch(/\? bash sed -n '1e touch pwned-e' a\.txt/);
  });

  const idOf = async (except: string[] = []) => {
    const listed = await runInProcess(['sessions', '--json'], { cwd: workspace.path });
    return listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id).find((id) => !except.includes(id))!;
  };

  it('resume keeps the run\'s deny rules: "rein resume <id> --yes" does not run what --deny forbade (D21)', async () => {
    await writeFile(at('keep.txt'), 'keep\n');
    await writeFile(at('script.json'), JSON.stringify({ turns: [{ text: 'w', toolCalls: [{ name: 'write', arguments: { path: 'o.txt', content: 'x' } }] }, bashTurn(['rm keep.txt']), { text: 'Done.' }] }));
    const run = await runInProcess(['run', 'persist', '--script', 'script.json', '--deny', 'bash:rm *'], { cwd: workspace.path });
    expect(run.code).toBe(3);
    const id = await idOf();
    const resumed = await runInProcess(['resume', id, '--yes'], { cwd: workspace.path });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(at('o.txt'))).toBe(true);
    expect(existsSync(at('keep.txt'))).toBe(true);
    expect(resumed.stdout).toMatch(/✗ bash rm keep\.txt Denied/);
    expect(resumed.stdout).not.toContain('permissions:');
  });

  it('a plan-mode session resumes in plan mode, and a wider --mode on resume is said out loud (D21)', async () => {
    await writeFile(at('keep.txt'), 'keep\n');
    const turns = [{ text: 'r', toolCalls: [{ name: 'read', arguments: { path: 'keep.txt' } }] }, { text: 'w', toolCalls: [{ name: 'write', arguments: { path: 'p.txt', content: 'x' } }] }, { text: 'Done.' }];
    await writeFile(at('script.json'), JSON.stringify({ turns }));
    expect((await runInProcess(['run', 'plan', '--script', 'script.json', '--mode', 'plan', '--yes'], { cwd: workspace.path })).code).toBe(0);
    const parent = await idOf();
    // A fork taken after the read, before the model is asked again: resuming it runs the write turn.
    const shown = await runInProcess(['show', parent, '--json'], { cwd: workspace.path });
    const settled = shown.stdout.trim().split('\n').map((line) => JSON.parse(line) as { seq: number; type: string }).filter((record) => record.type === 'tool.settled')[0]!;
    let fork = await runInProcess(['fork', parent, '--at', String(settled.seq), '--json'], { cwd: workspace.path });
    const boundary = /fork at (\d+) or (\d+)/.exec(fork.stderr);
    if (boundary) fork = await runInProcess(['fork', parent, '--at', boundary[2]!, '--json'], { cwd: workspace.path });
    expect(fork.code, fork.stderr).toBe(0);
    const child = (JSON.parse(fork.stdout.trim().split('\n').pop()!) as { sessionId: string }).sessionId;
    const resumed = await runInProcess(['resume', child, '--script', 'script.json', '--yes'], { cwd: workspace.path });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(at('p.txt'))).toBe(false);
    expect(resumed.stdout).toMatch(/✗ write p\.txt Denied/);
    // Naming a wider mode on resume is possible, and said before anything else.
    const widened = await runInProcess(['resume', child, '--mode', 'default'], { cwd: workspace.path });
    expect(widened.stdout).toContain('permissions: mode plan → default (wider than the session started with)');
  });
});
