import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, cliPath, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = {
  turns: [
    { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
    { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'out.txt', content: 'written\n' } }] },
    { text: 'Done.' },
  ],
};

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));
const python = ['python3', '/usr/bin/python3'].find((candidate) => candidate === 'python3' || existsSync(candidate))!;
const inTerminal = async (args: string[], cwd: string, answers: Array<{ expect: string; send: string }>) => {
  const { stdout } = await promisify(execFile)(python, [driver, JSON.stringify({ argv: [process.execPath, cliPath, ...args], cwd, answers, timeout: 60 })]);
  return JSON.parse(stdout) as { code: number | null; output: string; answered: number };
};

describe('approvals at the command line', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    workspace = await makeTempDir('rein-cli-approval-');
    await writeFile(join(workspace.path, 'notes.txt'), 'notes\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  });
  afterEach(() => workspace.remove());
  const cwd = () => ({ cwd: workspace.path });
  const out = () => join(workspace.path, 'out.txt');

  it('without a TTY an unanswered ask pauses (exit 3) and rein resume --approve continues it', async () => {
    const run = await runInProcess(['run', 'write it', '--script', 'script.json'], cwd());
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('? write out.txt');
    expect(run.stdout).toMatch(/waiting for approval root\/approval-\d+: write out\.txt/);
    expect(existsSync(out())).toBe(false);
    const [summary] = jsonLines((await runInProcess(['sessions', '--json'], cwd())).stdout);
    expect(summary).toMatchObject({ status: 'awaiting-approval' });
    const again = await runInProcess(['resume', summary!.id], cwd());
    expect(again.code).toBe(3);
    const approved = await runInProcess(['resume', summary!.id, '--approve', 'write'], cwd());
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('→ allow-once');
    expect(await readFile(out(), 'utf8')).toBe('written\n');
    expect((await runInProcess(['replay', summary!.id], cwd())).code).toBe(0);
  });

  it('--yes answers in advance, but a --deny rule holds whatever the answers', async () => {
    const yes = await runInProcess(['run', 'write it', '--script', 'script.json', '--yes'], cwd());
    expect(yes.code).toBe(0);
    expect(await readFile(out(), 'utf8')).toBe('written\n');
    const { rm } = await import('node:fs/promises');
    await rm(out());
    const denied = await runInProcess(['run', 'write it', '--script', 'script.json', '--yes', '--deny', 'write:out.*'], cwd());
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain('✗ write out.txt Denied');
    expect(existsSync(out())).toBe(false);
  });

  it('--mode plan hides tools that change things; calling one is a denial the model reads, and its answer completes the session', async () => {
    const plan = await runInProcess(['run', 'write it', '--script', 'script.json', '--mode', 'plan', '--json'], cwd());
    expect(plan.code).toBe(0);
    const records = jsonLines(plan.stdout);
    expect(entriesOfRows(records).find((record) => record.type === 'tool.rejected' && record.data.name === 'write')?.data).toMatchObject({ stage: 'visibility', code: 'tool_not_visible' });
    expect(entriesOfRows(records).find((record) => record.type === 'tool.settled' && record.data.name === 'write')?.data).toMatchObject({ errorCode: 'Denied', failedStage: 'visibility', denial: { source: 'mode' } });
    expect(entriesOfRows(records).filter((record) => record.type === 'turn.blocked')).toEqual([]);
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
    expect(existsSync(out())).toBe(false);
    expect((await runInProcess(['run', 'x', '--script', 'script.json', '--mode', 'yolo'], cwd())).code).toBe(2);
    expect((await runInProcess(['run', 'x', '--script', 'script.json', '--approve', 'not a rule!'], cwd())).code).toBe(2);
  });

  it('on a TTY asks, and the answer is what the log records', async () => {
    const allowed = await inTerminal(['run', 'write it', '--script', 'script.json'], workspace.path, [{ expect: 'allow\\? \\[y\\]es once', send: 'y\r' }]);
    expect(allowed.answered).toBe(1);
    expect(allowed.output).toContain('approval needed');
    expect(allowed.output).toContain('risk:');
    expect(allowed.code).toBe(0);
    expect(await readFile(out(), 'utf8')).toBe('written\n');
  });

  it('on a TTY a typed reason denies with feedback the model reads', async () => {
    const denied = await inTerminal(['run', 'write it', '--script', 'script.json'], workspace.path, [{ expect: 'allow\\? \\[y\\]es once', send: 'write to notes.txt instead\r' }]);
    expect(denied.code).toBe(0);
    expect(existsSync(out())).toBe(false);
    const [summary] = jsonLines((await runInProcess(['sessions', '--json'], cwd())).stdout);
    const records = jsonLines((await runInProcess(['show', summary!.id, '--json'], cwd())).stdout);
    expect(entriesOfRows(records).find((record) => record.type === 'approval.replied')?.data).toMatchObject({ decision: 'deny', feedback: 'write to notes.txt instead' });
    expect(entriesOfRows(records).find((record) => record.type === 'tool.settled' && record.data.name === 'write')?.data.observation).toContain('write to notes.txt instead');
  });
});
