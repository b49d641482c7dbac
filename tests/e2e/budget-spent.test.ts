import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('a spent wall-time budget ends the session, without asking anyone or rerunning anything', () => {
  it('calls that need approval are cancelled unasked (no pause), and a bash call that never ran is no boundary violation', async () => {
    const workspace = await makeTempDir('rein-budget-ask-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'w.txt', content: 'x' } }, { name: 'bash', arguments: { command: 'echo hi > hi.txt' } }] }, { text: 'Done.' }] }));
      const run = await runCli(['run', 'write', '--script', 'script.json', '--max-wall-time', '1', '--json'], { cwd: workspace.path });
      const records = jsonLines(run.stdout);
      expect(run.code, run.stderr).toBe(1);
      expect(entriesOfRows(records).filter((record) => record.type === 'approval.requested')).toEqual([]);
      expect(entriesOfRows(records).find((record) => record.type === 'session.ended')?.data).toMatchObject({ status: 'budget-exhausted' });
      // The wall-time budget also bounds the model call (issue 30 item 19): a 1 ms budget usually cancels the reply
      // itself, so no call is proposed; when the reply does come first, both calls are cancelled unasked.
      const settled = entriesOfRows(records).filter((record) => record.type === 'tool.settled').map((record) => record.data);
      expect([0, 2]).toContain(settled.length);
      for (const data of settled) expect(data).toMatchObject({ status: 'error', errorCode: 'Cancelled', failedStage: 'cancelled', observation: expect.stringContaining('nobody was asked') });
      expect(existsSync(join(workspace.path, 'w.txt'))).toBe(false);
      expect(existsSync(join(workspace.path, 'hi.txt'))).toBe(false);
      expect(entriesOfRows(records).filter((record) => record.type === 'turn.blocked')).toEqual([]);
      const id = records[0]!.stream as string;
      const show = await runCli(['show', id], { cwd: workspace.path });
      expect(show.stdout).not.toContain('shell_boundary_violation');
      expect(show.stdout).not.toContain('BLOCKED');
      expect((await runCli(['replay', id], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });

  it('resume does not rerun an in-doubt model call once the wall time is spent: it ends budget-exhausted', async () => {
    const workspace = await makeTempDir('rein-budget-resume-');
    try {
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Done.' }] }));
      // A budget the first run's one model call fits in (the budget bounds model calls too), spent by the time of the resume.
      const budgetMs = 3000;
      const run = await runCli(['run', 'answer', '--script', 'script.json', '--max-wall-time', String(budgetMs), '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      // A fork cut just after the model call was requested: that call is in doubt in the fork.
      const requested = entriesOfRows(records).find((record) => record.type === 'effect.requested' && record.data.kind === 'callModel')!;
      const fork = await runCli(['fork', requested.stream as string, '--at', String(requested.seq), '--json'], { cwd: workspace.path });
      expect(fork.code, fork.stderr).toBe(0);
      const forkId = (JSON.parse(fork.stdout) as { sessionId: string }).sessionId;
      // Real time is what the budget measures: let it run out (usually it has, the CLI's start-ups take longer).
      const createdAt = records[0]!.at as number;
      await new Promise((done) => setTimeout(done, Math.max(0, createdAt + budgetMs + 50 - Date.now())));
      const resumed = await runCli(['resume', forkId, '--yes', '--script', 'script.json', '--json'], { cwd: workspace.path });
      expect(resumed.code, resumed.stderr).toBe(1);
      const after = jsonLines(resumed.stdout);
      expect(entriesOfRows(after).filter((record) => record.type === 'model.responded' || record.type === 'model.attempted')).toEqual([]);
      expect(entriesOfRows(after).find((record) => record.type === 'effect.resolved')?.data).toMatchObject({ kind: 'callModel', resolution: 'failed-in-doubt', reason: expect.stringContaining('wall-time budget') });
      expect(entriesOfRows(after).find((record) => record.type === 'session.ended')?.data).toMatchObject({ status: 'budget-exhausted' });
      expect((await runCli(['replay', forkId], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });

  it('a reply proposing more calls than the tool-call budget has left runs the ones it allows and refuses the rest, each settled and in the trace (D22)', async () => {
    const workspace = await makeTempDir('rein-budget-calls-');
    try {
      const append = { name: 'bash', arguments: { command: 'echo k >> n.txt' } };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Appending.', toolCalls: [append, append, append] }, { text: 'Done.' }] }));
      const run = await runCli(['run', 'append', '--script', 'script.json', '--yes', '--max-tool-calls', '2', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(1);
      const records = jsonLines(run.stdout);
      expect(await readFile(join(workspace.path, 'n.txt'), 'utf8')).toBe('k\nk\n');
      const settled = entriesOfRows(records).filter((record) => record.type === 'tool.settled').map((record) => record.data);
      expect(settled).toHaveLength(3);
      expect(settled.slice(0, 2)).toMatchObject([{ status: 'ok' }, { status: 'ok' }]);
      expect(settled[2]).toMatchObject({ status: 'error', errorCode: 'Denied', failedStage: 'budget', denial: { source: 'budget' }, observation: expect.stringContaining('only the first 2 of') });
      expect(entriesOfRows(records).filter((record) => record.type === 'turn.blocked')).toEqual([]);
      expect(entriesOfRows(records).find((record) => record.type === 'session.ended')?.data).toMatchObject({ status: 'budget-exhausted', reason: expect.stringContaining('proposed 3 tool calls with 2 of 2 left; 1 was not run') });
      const id = records[0]!.stream as string;
      const trace = await runCli(['trace', id], { cwd: workspace.path });
      expect(trace.stdout.match(/bash\(echo k >> n\.txt\)/g)).toHaveLength(3);
      expect(trace.stdout).toContain('denied by budget');
      expect((await runCli(['replay', id], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });

  it('a reply once the tool-call budget is spent has every call refused and recorded, none run', async () => {
    const workspace = await makeTempDir('rein-budget-none-');
    try {
      const append = { name: 'bash', arguments: { command: 'echo k >> n.txt' } };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'One.', toolCalls: [append] }, { text: 'Two.', toolCalls: [append, append] }, { text: 'Done.' }] }));
      const run = await runCli(['run', 'append', '--script', 'script.json', '--yes', '--max-tool-calls', '1'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toContain('budget-exhausted — tool-call budget exhausted: the reply proposed 2 tool calls with 0 of 1 left; 2 were not run');
      expect(run.stdout).toContain('2 turns · 3 tool calls (2 denied)');
      expect(await readFile(join(workspace.path, 'n.txt'), 'utf8')).toBe('k\n');
    } finally {
      await workspace.remove();
    }
  });
});
