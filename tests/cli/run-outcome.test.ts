import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const failingTest = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { assert.strictEqual(1 + 1, 3); });\n";
const passingTest = "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { assert.strictEqual(1 + 1, 2); });\n";
const claimsSuccess = { turns: [{ text: 'Running the tests.', toolCalls: [{ name: 'bash', arguments: { command: 'node --test' } }] }, { text: 'All tests pass now.' }] };

/*
 * Issue 30 A1 and A4: how a run really ended is said where a person or a CI wrapper looks — the summary line, the exit
 * code, `rein sessions` — not only in `rein trace`; and a fork nobody resumed is not listed as `active`.
 */
describe('the trace outcome in the summary, the exit code and rein sessions', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  const sessionOf = (stdout: string): string => /session (s-[\w-]+):/.exec(stdout)![1]!;
  beforeAll(async () => {
    workspace = await makeTempDir('rein-outcome-');
    await mkdir(join(workspace.path, 'test'));
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(claimsSuccess));
  });
  afterAll(() => workspace.remove());

  it('a completed run whose last verification failed says outcome failed in its summary, exits 1, and rein sessions lists the outcome', async () => {
    await writeFile(join(workspace.path, 'test', 'add.test.js'), failingTest);
    const run = await cli(['run', 'make the tests pass', '--script', 'script.json', '--approve', 'bash:node --test']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/✗ bash node --test \(exit 1, \d+ ms\)/);
    expect(run.stdout).toMatch(/\ncompleted · outcome failed \(its last verification failed/);
    expect(run.code).toBe(1);
    const id = sessionOf(run.stdout);
    const listing = await cli(['sessions']);
    expect(listing.stdout).toMatch(new RegExp(`${id}  completed +failed +\\d+ records`));
    const [summary] = jsonLines((await cli(['sessions', '--json'])).stdout);
    expect(summary).toMatchObject({ id, status: 'completed', outcome: 'failed' });
    // Resuming it says the same and exits the same.
    const resumed = await cli(['resume', id]);
    expect(resumed.stdout).toContain(`already completed (outcome failed): session ${id} ended`);
    expect(resumed.code).toBe(1);
  });

  it('succeeded and unverified stay exit 0, each named in the summary', async () => {
    await writeFile(join(workspace.path, 'test', 'add.test.js'), passingTest);
    const passed = await cli(['run', 'check the tests', '--script', 'script.json', '--approve', 'bash:node --test']);
    expect(passed.stdout).toMatch(/\ncompleted · outcome succeeded\n/);
    expect(passed.code).toBe(0);
    await writeFile(join(workspace.path, 'answer.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const unverified = await cli(['run', 'say done', '--script', 'answer.json']);
    expect(unverified.stdout).toMatch(/\ncompleted · outcome unverified \(no passing verification speaks for the result: rein trace says why\)\n/);
    expect(unverified.code).toBe(0);
    const outcomes = jsonLines((await cli(['sessions', '--json'])).stdout).map((session) => session.outcome);
    expect(outcomes).toEqual(expect.arrayContaining(['failed', 'succeeded', 'unverified']));
  });

  it('a fork nobody resumed is listed forked, with the command that continues it; resumed, it is no longer forked', async () => {
    await writeFile(join(workspace.path, 'two.json'), JSON.stringify({ turns: [{ text: 'Listing.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { text: 'Done.' }] }));
    const run = await cli(['run', 'list', '--script', 'two.json']);
    const id = sessionOf(run.stdout);
    const records = jsonLines((await cli(['show', id, '--json'])).stdout);
    const settled = records.find((record) => record.type === 'tool.settled')!;
    // The step that settled the call ends at the record before the next input.
    const boundary = records.find((record) => record.seq > settled.seq && ['model.responded', 'model.failed'].includes(record.type))!.seq - 1;
    const fork = await cli(['fork', id, '--at', String(boundary)]);
    const forkId = fork.stdout.trim();
    expect(forkId).toMatch(/^s-/);
    expect(fork.stderr).toContain(`continue it with rein resume ${forkId}`);
    const listed = jsonLines((await cli(['sessions', '--json'])).stdout).find((session) => session.id === forkId)!;
    expect(listed).toMatchObject({ status: 'forked', outcome: 'forked', forkedFrom: { stream: id, seq: boundary } });
    expect((await cli(['sessions'])).stdout).toContain(`; continue it with rein resume ${forkId})`);
    expect((await cli(['sessions', '--status', 'forked', '--json'])).stdout).toContain(forkId);
    const resumed = await cli(['resume', forkId]);
    expect(resumed.code).toBe(0);
    const after = jsonLines((await cli(['sessions', '--json'])).stdout).find((session) => session.id === forkId)!;
    expect(after.status).toBe('completed');
  });

  it('a run and a fork made with --workspace from elsewhere print follow-up commands that run as printed from there', async () => {
    const elsewhere = await makeTempDir('rein-outcome-elsewhere-');
    try {
      const there = (args: string[]) => runInProcess(args, { cwd: elsewhere.path, env: { HOME: workspace.path } });
      const run = await there(['run', 'list', '--script', join(workspace.path, 'two.json'), '--workspace', workspace.path]);
      const id = sessionOf(run.stdout);
      expect(run.stdout).toContain(`session ${id}: rein show ${id} --workspace ${workspace.path} · rein trace ${id} --workspace ${workspace.path}`);
      const records = jsonLines((await there(['show', id, '--json', '--workspace', workspace.path])).stdout);
      expect(records.length).toBeGreaterThan(3);
      const settled = records.find((record) => record.type === 'tool.settled')!;
      const boundary = records.find((record) => record.seq > settled.seq && ['model.responded', 'model.failed'].includes(record.type))!.seq - 1;
      const fork = await there(['fork', id, '--at', String(boundary), '--workspace', workspace.path]);
      const forkId = fork.stdout.trim();
      const printed = /continue it with (rein resume .*)$/m.exec(fork.stderr)?.[1];
      expect(printed).toBe(`rein resume ${forkId} --workspace ${workspace.path}`);
      expect((await there(['sessions', '--workspace', workspace.path])).stdout).toContain(`; continue it with ${printed})`);
      const resumed = await there(printed!.split(' ').slice(1));
      expect(resumed.code, resumed.stderr).toBe(0);
    } finally {
      await elsewhere.remove();
    }
  });

  it('rein sessions shows a task with line breaks on one line, escaped: a task cannot forge rows', async () => {
    await writeFile(join(workspace.path, 'answer.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
    const forged = 'say done\ns-forged  completed   succeeded        9 records  all good';
    const run = await cli(['run', forged, '--script', 'answer.json']);
    const id = sessionOf(run.stdout);
    const line = (await cli(['sessions'])).stdout.split('\n').find((row) => row.startsWith(id))!;
    expect(line).toContain('say done\\ns-forged');
    expect((await cli(['sessions'])).stdout.split('\n').some((row) => row.startsWith('s-forged'))).toBe(false);
  });
});
