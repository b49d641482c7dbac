import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';
import { raiseFlagsOf } from '../../src/cli/commands/resume.action.js';
import { ReinError } from '../../src/host/host-errors.js';

// Three tool turns under --max-turns 1: the session ends budget-exhausted after the first; a raise lets it finish.
const script = {
  turns: [
    { text: 'r1', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'r2', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
    { text: 'Done.' },
  ],
};

/** `rein resume <id> --max-turns/--max-tokens/--max-wall-time`: a spent budget is raised as an input and the session goes on. */
describe('rein resume raising a spent budget', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let env: Record<string, string>;
  let sessionId: string;
  const rein = (args: readonly string[]) => runInProcess(args, { cwd: workspace.path, env });
  const recordCount = async (): Promise<number> => {
    const listed = jsonLines((await rein(['sessions', '--json'])).stdout) as Array<{ id: string; head: number }>;
    return listed.find((row) => row.id === sessionId)?.head ?? -1;
  };

  beforeAll(async () => {
    workspace = await makeTempDir('rein-resume-raise-');
    env = { HOME: workspace.path };
    await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    const run = await rein(['run', 'read it', '--script', 'script.json', '--yes', '--max-turns', '1', '--json']);
    const records = entriesOfRows(jsonLines(run.stdout));
    expect(records.find((record) => record.type === 'session.ended')?.data).toMatchObject({ status: 'budget-exhausted', reason: expect.stringMatching(/^turn budget exhausted/) });
    sessionId = records[0]!.stream as string;
  });
  afterAll(() => workspace?.remove());

  it('refuses a raise that cannot let the session go on, and a malformed flag, writing nothing', async () => {
    const before = await recordCount();
    expect(before).toBeGreaterThan(0);
    const notAbove = await rein(['resume', sessionId, '--script', 'script.json', '--yes', '--max-turns', '1']);
    expect(notAbove.code).toBe(2);
    expect(notAbove.stderr).toContain('BUDGET_NOT_RAISED');
    expect(notAbove.stderr).toContain('maxTurns 1 is not above the 1 turn(s) already taken');
    // The turn budget is the spent one: raising only the tokens leaves it spent.
    const otherBudget = await rein(['resume', sessionId, '--script', 'script.json', '--yes', '--max-tokens', '9999999']);
    expect(otherBudget.code).toBe(2);
    expect(otherBudget.stderr).toMatch(/BUDGET_NOT_RAISED.*turn budget is still spent/);
    for (const bad of ['0', '-3', '1.5', '1e3', 'many']) {
      const refused = await rein(['resume', sessionId, '--script', 'script.json', '--max-turns', bad]);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr, bad).toContain('USAGE');
    }
    expect(await recordCount()).toBe(before);
  });

  it('records the raise before anything runs, continues to the end, and replays and shows it', async () => {
    const resumed = await rein(['resume', sessionId, '--script', 'script.json', '--yes', '--max-turns', '5', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const show = await rein(['show', sessionId, '--json']);
    const records = entriesOfRows(jsonLines(show.stdout));
    const raised = records.findIndex((record) => record.type === 'session.budgets-raised');
    expect(records[raised]?.data).toEqual({ maxTurns: 5 });
    // Persist before effect: the raise comes before the next model call's request, and the session ran to its end.
    const nextCall = records.findIndex((record, index) => index > raised && record.type === 'effect.requested' && (record.data as { kind?: string }).kind === 'callModel');
    expect(nextCall).toBeGreaterThan(raised);
    // The call runs only once the resume is recorded: its reply comes after session.resumed (a fast one used to race it).
    const resumedAt = records.findIndex((record) => record.type === 'session.resumed' && record.seq > records[raised]!.seq);
    expect(resumedAt).toBeGreaterThan(raised);
    expect(records.findIndex((record, index) => index > raised && record.type === 'model.responded')).toBeGreaterThan(resumedAt);
    const ends = records.filter((record) => record.type === 'session.ended' && record.actor === 'root').map((record) => (record.data as { status: string }).status);
    expect(ends).toEqual(['budget-exhausted', 'completed']);
    expect((await rein(['show', sessionId])).stdout).toContain('budgets raised: maxTurns 5');
    const replay = await rein(['replay', sessionId]);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const listed = jsonLines((await rein(['sessions', '--json'])).stdout) as Array<{ id: string; status: string }>;
    expect(listed.find((row) => row.id === sessionId)?.status).toBe('completed');
    // A completed session has no spent budget to raise.
    const again = await rein(['resume', sessionId, '--script', 'script.json', '--max-turns', '10']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('BUDGET_NOT_RAISED');
  });

  it('reads any flag text as a raise, no raise, or a USAGE error naming the flag (property)', () => {
    const text = fc.oneof(fc.string({ maxLength: 12 }), fc.integer({ min: -5, max: 1e6 }).map(String), fc.double().map(String), fc.constantFrom('0', '01', '1e3', ' 7', '9007199254740993'));
    fc.assert(
      fc.property(fc.option(text, { nil: undefined }), fc.option(text, { nil: undefined }), fc.option(text, { nil: undefined }), fc.option(text, { nil: undefined }), (maxTurns, maxToolCalls, maxTokens, maxWallTime) => {
        const flags = { ...(maxTurns === undefined ? {} : { maxTurns }), ...(maxToolCalls === undefined ? {} : { maxToolCalls }), ...(maxTokens === undefined ? {} : { maxTokens }), ...(maxWallTime === undefined ? {} : { maxWallTime }) };
        try {
          const raise = raiseFlagsOf(flags);
          if (maxTurns === undefined && maxToolCalls === undefined && maxTokens === undefined && maxWallTime === undefined) return raise === undefined;
          return raise !== undefined && Object.values(raise).every((limit) => Number.isSafeInteger(limit) && limit > 0);
        } catch (error) {
          return error instanceof ReinError && error.code === 'USAGE' && /--max-(turns|tool-calls|tokens|wall-time) must be a positive integer/.test(error.message);
        }
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

/** Two sessions that have not ended (one waits on an approval) and one whose tool-call budget is spent. */
describe('rein resume raising the budget of an interrupted session, and the tool-call budget', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let env: Record<string, string>;
  const rein = (args: readonly string[]) => runInProcess(args, { cwd: workspace.path, env });
  const idOf = (stdout: string) => /session (s-[\w-]+)/.exec(stdout)![1]!;
  const rootEnds = async (id: string) =>
    entriesOfRows(jsonLines((await rein(['show', id, '--json'])).stdout))
      .filter((record) => record.type === 'session.ended' && record.actor === 'root')
      .map((record) => (record.data as { status: string; reason?: string }).status);
  // The first turn's write asks (no --yes: the run stops with the question open); two more reads, then the answer.
  const asking = {
    turns: [
      { text: 'w', toolCalls: [{ name: 'write', arguments: { path: 'w.txt', content: 'x' } }] },
      { text: 'r1', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
      { text: 'r2', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] },
      { text: 'Done.' },
    ],
  };

  beforeAll(async () => {
    workspace = await makeTempDir('rein-resume-raise-interrupted-');
    env = { HOME: workspace.path };
    await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'asking.json'), JSON.stringify(asking));
    await writeFile(join(workspace.path, 'two-reads.json'), JSON.stringify({ turns: [{ text: 'both', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }, { name: 'glob', arguments: { pattern: '*.txt' } }] }, { text: 'Done.' }] }));
  });
  afterAll(() => workspace?.remove());

  it('a raise given to the resume of a session that stopped before it ended applies: it runs past the limit it started with', async () => {
    // The control: resumed without a raise, the 2-turn budget ends it.
    const control = await rein(['run', 'write then read', '--script', 'asking.json', '--max-turns', '2']);
    expect(control.code, control.stdout + control.stderr).toBe(3);
    const controlId = idOf(control.stdout);
    expect((await rein(['resume', controlId, '--script', 'asking.json', '--yes'])).code).not.toBe(0);
    expect(await rootEnds(controlId)).toEqual(['budget-exhausted']);

    const run = await rein(['run', 'write then read', '--script', 'asking.json', '--max-turns', '2']);
    expect(run.code, run.stdout + run.stderr).toBe(3);
    const id = idOf(run.stdout);
    // Not above what is spent: refused, nothing written.
    const low = await rein(['resume', id, '--script', 'asking.json', '--yes', '--max-turns', '1']);
    expect(low.code).toBe(2);
    expect(low.stderr).toContain('BUDGET_NOT_RAISED');
    expect(low.stderr).toContain('maxTurns 1 is not above the 1 turn(s) already taken');
    const resumed = await rein(['resume', id, '--script', 'asking.json', '--yes', '--max-turns', '6']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('budgets raised: maxTurns 6; the session continues');
    const records = entriesOfRows(jsonLines((await rein(['show', id, '--json'])).stdout));
    const raisedAt = records.findIndex((record) => record.type === 'session.budgets-raised');
    expect(records[raisedAt]?.data).toEqual({ maxTurns: 6 });
    expect(raisedAt).toBeLessThan(records.findIndex((record) => record.type === 'session.resumed'));
    // One end, completed: the raise applied in place, no budget ended it.
    expect(await rootEnds(id)).toEqual(['completed']);
    expect(records.filter((record) => record.type === 'model.responded')).toHaveLength(4);
    expect((await rein(['replay', id])).code).toBe(0);
  });

  it('a spent tool-call budget is raised with --max-tool-calls; the other flags alone are refused', async () => {
    const run = await rein(['run', 'read twice', '--script', 'two-reads.json', '--yes', '--max-tool-calls', '1']);
    const id = idOf(run.stdout);
    expect(await rootEnds(id)).toEqual(['budget-exhausted']);
    const advice = await rein(['resume', id, '--script', 'two-reads.json']);
    expect(advice.stdout + advice.stderr).toContain(`rein resume ${id} --max-tool-calls <n>`);
    const turnsOnly = await rein(['resume', id, '--script', 'two-reads.json', '--yes', '--max-turns', '9']);
    expect(turnsOnly.code).toBe(2);
    expect(turnsOnly.stderr).toMatch(/BUDGET_NOT_RAISED.*tool-call budget is spent.*--max-tool-calls/);
    const notAbove = await rein(['resume', id, '--script', 'two-reads.json', '--yes', '--max-tool-calls', '1']);
    expect(notAbove.stderr).toContain('maxToolCalls 1 is not above the 1 tool call(s) already made');
    const resumed = await rein(['resume', id, '--script', 'two-reads.json', '--yes', '--max-tool-calls', '5']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(await rootEnds(id)).toEqual(['budget-exhausted', 'completed']);
    expect((await rein(['replay', id])).code).toBe(0);
  });
});
