import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath, jsonLines, startCli } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { eventually } from '../support/sandbox.js';
import { makeTempDir } from '../support/temp-dir.js';
import { scaledTimeout } from '../support/timeouts.js';

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));
const inTerminal = async (args: string[], cwd: string, answers: Array<{ expect: string; send: string }>) => {
  const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify({ argv: [process.execPath, cliPath, ...args], cwd, answers, timeout: 60 })], { env: { ...process.env, HOME: cwd } });
  const result = JSON.parse(stdout) as { code: number | null; output: string; answered: number };
  // What a person reads: without colours, line ends as the program wrote them.
  return { ...result, output: result.output.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').replace(/\r\n/g, '\n') };
};

/** Waits on a file, then removes another: the second call is one a person must be asked about. */
const script = { turns: [{ text: 'Waiting.', toolCalls: [{ name: 'bash', arguments: { command: 'touch started; test -f go || sleep 30' } }] }, { text: 'Cleaning.', toolCalls: [{ name: 'bash', arguments: { command: 'rm -f a.txt' } }] }, { text: 'Done.' }] };

/*
 * Issue 30 B7: confirming the rerun of one in-doubt command must not approve everything after it. `--confirm <effectId>`
 * confirms that call only, the printed hint names it (not `--yes`), and on a terminal rein asks.
 */
describe('confirming the rerun of an in-doubt call', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  /** A session cut off (SIGINT) while its first command ran: that call is in doubt. */
  const interrupted = async (): Promise<string> => {
    const child = startCli(['run', 'wait, then clean', '--script', 'script.json', '--yes'], { cwd: workspace.path, env: { HOME: workspace.path } });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    // The command itself says it started (so `tool.started` is durable): interrupt it then, not after a guessed delay.
    await eventually(() => stdout.includes('Waiting.') && existsSync(join(workspace.path, 'started')), (started) => started, scaledTimeout(60_000));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    await writeFile(join(workspace.path, 'go'), '');
    return /session (s-[\w-]+):/.exec(stdout)![1]!;
  };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-confirm-');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    await writeFile(join(workspace.path, 'a.txt'), 'keep me\n');
  });
  afterEach(() => workspace.remove());

  it('--confirm <effectId> reruns that call and answers nothing else: the next command still waits for a person', async () => {
    const id = await interrupted();
    const waiting = await cli(['resume', id]);
    expect(waiting.code).toBe(3);
    const effectId = /in doubt: (root:e\d+) \(bash touch started; test -f go \|\| sleep 30\) → awaiting-confirmation/.exec(waiting.stdout)![1]!;
    expect(waiting.stdout).toContain(`rerun it with: rein resume ${id} --confirm ${effectId}`);
    expect(waiting.stdout).not.toContain('--yes');
    const confirmed = await cli(['resume', id, '--confirm', effectId]);
    expect(confirmed.stdout).toMatch(/✓ bash touch started; test -f go \|\| sleep 30 \(exit 0, \d+ ms\)/);
    expect(confirmed.stdout).toMatch(/waiting for approval root\/approval-\d+: bash rm -f a\.txt/);
    expect(confirmed.code).toBe(3);
    expect(existsSync(join(workspace.path, 'a.txt'))).toBe(true);
    const records = jsonLines((await cli(['show', id, '--json'])).stdout);
    expect(records.filter((record) => record.type === 'effect.resolved').map((record) => [record.data.effectId, record.data.resolution])).toEqual([[effectId, 'awaiting-confirmation'], [effectId, 'rerun']]);
  });

  it('--confirm of an id that is not in doubt says so', async () => {
    const id = await interrupted();
    const wrong = await cli(['resume', id, '--confirm', 'root:e99']);
    expect(wrong.stderr).toMatch(/rein: warning: --confirm root:e99: no in-doubt call of session s-[\w-]+ has that id \(in doubt: root:e\d+\)/);
    expect(wrong.code).toBe(3);
  });

  it('on a terminal rein asks about the rerun, and the question after it is asked on its own', async () => {
    const id = await interrupted();
    const run = await inTerminal(['resume', id], workspace.path, [
      { expect: 'rerun it\\? \\[y\\]es', send: 'y\r' },
      { expect: 'allow\\? \\[y\\]es once', send: 'n\r' },
    ]);
    expect(run.answered).toBe(2);
    expect(run.output).toMatch(/in doubt: root:e\d+ \(bash touch started; test -f go \|\| sleep 30\): its outcome is unknown/);
    expect(run.output).toMatch(/✓ bash touch started; test -f go \|\| sleep 30 \(exit 0, \d+ ms\)/);
    expect(run.output).toMatch(/bash rm -f a\.txt Denied/);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace.path, 'a.txt'))).toBe(true);
  });
});
