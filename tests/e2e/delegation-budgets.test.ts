import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/temp-dir.js';

type Row = Record<string, any>;

const append = { name: 'bash', arguments: { command: 'echo x >> calls.txt' } };
const testerReport = { name: 'submit_report', arguments: { status: 'blocked', summary: 'could not finish', command: 'npm test', exit_code: 1, passed: false, failing_tests: [], relevant_output: '' } };
const testers = (count: number) => ({ name: 'delegate_task', arguments: { tasks: Array.from({ length: count }, (_, index) => ({ id: `t${index}`, role: 'tester', objective: 'run' })) } });

const modelCalls = (records: readonly Row[]) => entriesOfRows(records).filter((record) => record.type === 'effect.requested' && record.data.kind === 'callModel');

describe('a session budget holds for the whole delegation tree (trial5 E38)', () => {
  it('--max-tool-calls 10 with four parallel testers: they share the 9 calls left, and the parent is refused what they spent', async () => {
    const workspace = await makeTempDir('rein-tree-calls-');
    try {
      // The trial's repro: each tester wants three appends and a report; then the parent wants one more command.
      const script = { turns: [{ text: 'd', toolCalls: [testers(4)] }, { text: 'one more', toolCalls: [append] }, { text: 'Done.' }], agents: { tester: { turns: [{ text: 't', toolCalls: [append, append, append] }, { text: 'r', toolCalls: [testerReport] }] } } };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runCli(['run', 'b', '--script', 'script.json', '--yes', '--max-tool-calls', '10', '--json'], { cwd: workspace.path });
      const records = jsonLines(run.stdout);
      // 1 delegate_task + 9 appends: the children got 3, 2, 2 and 2 calls (fair shares of the 9 left), not 9 each.
      expect((await readFile(join(workspace.path, 'calls.txt'), 'utf8')).split('\n').filter(Boolean)).toHaveLength(9);
      const started = entriesOfRows(records).filter((record) => record.type === 'delegation.started').map((record) => record.data.task.budgets.maxToolCalls);
      expect(started).toEqual([3, 2, 2, 2]);
      // A child's call past its share is refused like the parent's own: settled Denied at the budget stage, saying so.
      const refused = entriesOfRows(records).filter((record) => record.type === 'tool.settled' && record.actor !== 'root' && record.data.failedStage === 'budget');
      expect(refused).toHaveLength(4);
      for (const row of refused) expect(row.data).toMatchObject({ errorCode: 'Denied', denial: { source: 'budget' }, observation: expect.stringContaining("this child's share of what its parent had left") });
      // The parent is charged what its children spent: its own next call is refused, naming them.
      const rootCalls = entriesOfRows(records).filter((record) => record.type === 'tool.settled' && record.actor === 'root').map((record) => record.data);
      expect(rootCalls).toHaveLength(1);
      expect(rootCalls[0]).toMatchObject({ name: 'bash', failedStage: 'budget', observation: expect.stringContaining('9 of them were made by delegated children') });
      expect(entriesOfRows(records).find((record) => record.type === 'session.ended' && record.actor === 'root')?.data).toMatchObject({
        status: 'budget-exhausted',
        reason: expect.stringContaining('with 0 of 10 left (9 of them were made by delegated children)'),
      });
      expect(run.code, run.stderr).toBe(1);
      const id = records[0]!.stream as string;
      const replay = await runCli(['replay', id], { cwd: workspace.path });
      expect(replay.code, replay.stderr).toBe(0);
      // The summary counts the whole tree: the session ran 10 calls, not "1 tool call".
      const plain = await runCli(['run', 'b', '--script', 'script.json', '--yes', '--max-tool-calls', '10'], { cwd: workspace.path });
      expect(plain.stdout).toMatch(/ · 10 tool calls/);
    } finally {
      await workspace.remove();
    }
  });

  it('--max-turns 4: the children share the turns left but one, so the parent still answers', async () => {
    const workspace = await makeTempDir('rein-tree-turns-');
    try {
      // Each tester wants two turns; the parent, on its first of 4, keeps one for the join: the four share 2.
      const script = { turns: [{ text: 'd', toolCalls: [testers(4)] }, { text: 'Done.' }], agents: { tester: { turns: [{ text: 't', toolCalls: [append] }, { text: 'r', toolCalls: [testerReport] }] } } };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runCli(['run', 'b', '--script', 'script.json', '--yes', '--max-turns', '4', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      expect(entriesOfRows(records).filter((record) => record.type === 'delegation.started').map((record) => record.data.task.budgets.maxTurns)).toEqual([1, 1, 0, 0]);
      expect(modelCalls(records).length).toBeLessThanOrEqual(4);
      expect(entriesOfRows(records).find((record) => record.type === 'session.ended' && record.actor === 'root')?.data).toMatchObject({ status: 'completed' });
      // A child with no turn left ends at once, as out of budget, and the join says so.
      expect(entriesOfRows(records).filter((record) => record.type === 'delegation.failed').map((record) => record.data.reason)).toEqual(expect.arrayContaining(['turn budget exhausted']));
      expect((await runCli(['replay', records[0]!.stream as string], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });
});

describe('no model call once the session\'s tokens are spent (trial 6 F9)', () => {
  it('--max-tokens 1000 with two explorers that spend it: after the join the root ends budget-exhausted without calling the model again', async () => {
    const workspace = await makeTempDir('rein-tree-tokens-');
    try {
      await writeFile(join(workspace.path, 'a.txt'), 'hi\n');
      // The trial's script: the root (110 tokens a turn) delegates two explorers whose turns cost 410 tokens each.
      const read = { name: 'read', arguments: { path: 'a.txt' } };
      const report = { name: 'submit_report', arguments: { summary: 'read it', findings: [] } };
      const explorers = { name: 'delegate_task', arguments: { tasks: [{ id: 'e1', role: 'explorer', objective: 'look' }, { id: 'e2', role: 'explorer', objective: 'look' }] } };
      const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 10 });
      const script = {
        turns: [{ text: 'd', toolCalls: [explorers], usage: usage(100) }, { text: 'Done.', usage: usage(100) }],
        agents: { explorer: { turns: [{ text: 'r', toolCalls: [read], usage: usage(400) }, { text: 'r', toolCalls: [read], usage: usage(400) }, { text: 's', toolCalls: [report], usage: usage(400) }] } },
      };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runCli(['run', 'd', '--script', 'script.json', '--yes', '--max-tokens', '1000', '--json'], { cwd: workspace.path });
      const records = jsonLines(run.stdout);
      expect(run.code, run.stderr).toBe(1);
      // delegation.joined and effect.requested are entries of step records: read the log flattened, in order.
      const entries = entriesOfRows(records);
      const joined = entries.findIndex((record) => record.type === 'delegation.joined');
      expect(joined).toBeGreaterThan(0);
      // The root's only model call is its first: nothing is requested for it after the join.
      expect(modelCalls(records).filter((record) => record.actor === 'root')).toHaveLength(1);
      expect(entries.slice(joined).filter((record) => record.type === 'effect.requested' && record.data.kind === 'callModel')).toEqual([]);
      expect(entriesOfRows(records).find((record) => record.type === 'session.ended' && record.actor === 'root')?.data).toMatchObject({ status: 'budget-exhausted', reason: 'token budget exhausted' });
      expect((await runCli(['replay', records[0]!.stream as string], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });
});

describe('a child the join cancels starts nothing after its cancellation, and every started call settles (trial5 E29)', () => {
  // What the child recorded after its cancellation, in log order (the cancellation is an entry of a step record, and
  // so is what the child derived: read the flattened log, not the raw rows).
  const afterCancellation = (records: readonly Row[], child: string) => {
    const entries = entriesOfRows(records);
    const cancelled = entries.findIndex((record) => record.type === 'delegation.failed' && record.data.child === child && record.data.cancelled === true);
    expect(cancelled, `${child} was cancelled`).toBeGreaterThanOrEqual(0);
    return entries.slice(cancelled + 1).filter((record) => record.actor === child);
  };
  const unsettled = (records: readonly Row[]) => {
    // A delegate_task call ends with its plan accepted (its join then settles it in its turn).
    const settled = new Set(entriesOfRows(records).filter((record) => record.type === 'tool.settled' || record.type === 'delegation.accepted').map((record) => record.data.effectId));
    return entriesOfRows(records).filter((record) => record.type === 'tool.started' && !settled.has(record.data.effectId)).map((record) => `${record.actor} ${record.data.name}`);
  };

  it('the trial repro: the slow tester is cancelled before its call starts, and nothing of that call is recorded after', async () => {
    const workspace = await makeTempDir('rein-join-cancel-');
    try {
      const script = {
        turns: [{ text: 'd', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'fast', role: 'explorer', objective: 'look' }, { id: 'slow', role: 'tester', objective: 'run' }], join: { policy: 'any' } } }] }, { text: 'wait', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 2; ls' } }] }, { text: 'Done.' }],
        agents: {
          explorer: { turns: [{ text: 'r', toolCalls: [{ name: 'submit_report', arguments: { status: 'partial', summary: 'x', checked_paths: ['a.txt'], findings: [], recommendation: 'none' } }] }] },
          tester: { turns: [{ text: 't', toolCalls: [{ name: 'bash', arguments: { command: 'echo early > early.txt; sleep 8; echo late > late.txt' } }] }, { text: 'r', toolCalls: [testerReport] }] },
        },
      };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runCli(['run', 'j', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      const late = afterCancellation(records, 'root/delegation-2/slow');
      expect(late.filter((record) => ['tool.validated', 'permission.decided', 'tool.started', 'approval.requested'].includes(record.type)).map((record) => record.type)).toEqual([]);
      expect(unsettled(records)).toEqual([]);
      expect(existsSync(join(workspace.path, 'late.txt'))).toBe(false);
      expect((await runCli(['replay', records[0]!.stream as string], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });

  it('a call already running when the join cancels its child is stopped and settles on the record', async () => {
    const workspace = await makeTempDir('rein-join-running-');
    try {
      // Commands that may change the workspace run one at a time per workspace (each window's changes are its call's),
      // so the order matters: the tester asks for its short command at once, the worker only after a read-only call,
      // so its long command queues behind the tester's and starts when that ends, while the tester reports. (Both at
      // the first turn raced under load: the worker's 20 s command could run first and report before the tester.) The
      // parent then works on a while (a session that ends drops whatever still runs).
      const script = {
        turns: [{ text: 'd', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'fast', role: 'tester', objective: 'quick' }, { id: 'slow', role: 'worker', objective: 'run' }], join: { policy: 'any' } } }] }, { text: 'wait', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 3' } }] }, { text: 'Done.' }],
        agents: {
          tester: { turns: [{ text: 'wait', toolCalls: [{ name: 'bash', arguments: { command: 'sleep 2' } }] }, { text: 'r', toolCalls: [testerReport] }] },
          worker: { turns: [{ text: 'look', toolCalls: [{ name: 'read', arguments: { path: 'script.json' } }] }, { text: 't', toolCalls: [{ name: 'bash', arguments: { command: 'echo early > early.txt; sleep 20; echo late > late.txt' } }] }, { text: 'r', toolCalls: [{ name: 'submit_report', arguments: { status: 'blocked', summary: 'x', changes: [], rationale: 'x' } }] }] },
        },
      };
      await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
      const run = await runCli(['run', 'j', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(0);
      const records = jsonLines(run.stdout);
      // The slow child's last started call is its command (the read before it settled).
      const started = entriesOfRows(records).filter((record) => record.type === 'tool.started' && record.actor === 'root/delegation-2/slow').at(-1);
      expect(started, 'the slow command started before the join').toBeDefined();
      const late = afterCancellation(records, 'root/delegation-2/slow');
      expect(late.map((record) => record.type)).toEqual(['tool.settled']);
      expect(late[0]!.data).toMatchObject({ effectId: started!.data.effectId, status: 'error', errorCode: 'Cancelled' });
      expect(unsettled(records)).toEqual([]);
      expect(existsSync(join(workspace.path, 'late.txt'))).toBe(false);
      expect((await runCli(['replay', records[0]!.stream as string], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });
});
