import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));
const inTerminal = async (args: string[], cwd: string, answers: Array<{ expect: string; send?: string; signal?: string }>) => {
  const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify({ argv: [process.execPath, cliPath, ...args], cwd, answers, timeout: 60 })]);
  return JSON.parse(stdout) as { code: number | null; output: string; answered: number };
};

const writeScript = { turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'written\n' } }] }, { text: 'Done.' }] };
const chatty = { turns: [{ text: 'Working.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1; echo one' } }] }, { text: 'Still working.', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1; echo two' } }] }, { text: 'Done.' }] };

/*
 * Issue 30 A3: every way a run is cut off leaves the session `interrupted`, prints the resume command, and exits with the
 * documented code (130): a reader of stdout and stderr that goes away (`2>&1 | head`), a SIGINT sent to rein while it
 * asks for an approval, Ctrl-D at that prompt.
 */
describe('a run cut off', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const env = () => ({ HOME: workspace.path });
  const statusOf = async () => jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env: env() })).stdout)[0]!;
  beforeEach(async () => {
    workspace = await makeTempDir('rein-cut-off-');
    await writeFile(join(workspace.path, 'write.json'), JSON.stringify(writeScript));
    await writeFile(join(workspace.path, 'chatty.json'), JSON.stringify(chatty));
  });
  afterEach(() => workspace.remove());

  it('rein run … 2>&1 | head -1: interrupted and recorded, exit 130 (not 1 with the session left active)', async () => {
    const line = `"${process.execPath}" "${cliPath}" run 'work' --script chatty.json --yes 2>&1 | head -1; echo "exit=\${PIPESTATUS[0]}"`;
    const shell = spawn('bash', ['-c', line], { cwd: workspace.path, env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise((resolve) => shell.on('close', resolve));
    expect(output).toMatch(/exit=130\n$/);
    const session = await statusOf();
    expect(session.status).toBe('interrupted');
    const records = jsonLines((await runInProcess(['show', session.id, '--json'], { cwd: workspace.path, env: env() })).stdout);
    expect(records.find((record) => record.type === 'session.interrupted')?.data.reason).toBe('stdout was closed');
  });

  it('a SIGINT sent to rein while it asks for an approval: interrupted, the summary with rein resume, exit 130', async () => {
    const run = await inTerminal(['run', 'write it', '--script', 'write.json'], workspace.path, [{ expect: 'allow\\? \\[y\\]es once', signal: 'SIGINT' }]);
    expect(run.answered).toBe(1);
    expect(run.output).not.toContain('ABORT_ERR');
    expect(run.output).toMatch(/interrupted(?:\u001b\[0m)?\r?\n1 turn/);
    const session = await statusOf();
    expect(run.output).toContain(`rein resume ${session.id}`);
    expect(run.code).toBe(130);
    expect(session.status).toBe('interrupted');
  });

  it('Ctrl-D at the approval prompt: nobody is left to answer, so the run is interrupted like Ctrl-C, with the resume command', async () => {
    const run = await inTerminal(['run', 'write it', '--script', 'write.json'], workspace.path, [{ expect: 'allow\\? \\[y\\]es once', send: '\u0004' }]);
    expect(run.answered).toBe(1);
    expect(run.output).not.toContain('ABORT_ERR');
    const session = await statusOf();
    expect(run.output).toContain(`end of input at the approval prompt: interrupting session ${session.id}; continue it with rein resume ${session.id}`);
    expect(run.output).toMatch(/interrupted(?:\u001b\[0m)?\r?\n1 turn/);
    expect(run.code).toBe(130);
    expect(session.status).toBe('interrupted');
    // The question stays pending: the resume asks it again.
    const resumed = await runInProcess(['resume', session.id, '--approve', 'write'], { cwd: workspace.path, env: env() });
    expect(resumed.code).toBe(0);
  });
});
