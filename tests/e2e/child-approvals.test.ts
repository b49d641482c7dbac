import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfRows, cliPath, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

/** The root delegates one worker, whose write needs a person's yes; the worker then reports. */
const script = {
  turns: [{ text: 'Delegating.', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 'w', role: 'worker', objective: 'write b.txt' }] } }] }, { text: 'Done: the worker wrote b.txt.' }],
  agents: {
    worker: {
      turns: [
        { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'beta\n' } }] },
        { text: 'Reporting.', toolCalls: [{ name: 'submit_report', arguments: { status: 'completed', summary: 'wrote b.txt', changes: [{ path: 'b.txt', description: 'new file' }], rationale: 'asked to' } }] },
      ],
    },
  },
};

const driver = fileURLToPath(new URL('../support/pty-driver.py', import.meta.url));

describe("a child agent's approval answered at the command line", () => {
  let workspace: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runInProcess(args, { cwd: workspace.path, env: { HOME: workspace.path } });
  beforeEach(async () => {
    workspace = await makeTempDir('rein-child-approval-');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  });
  afterEach(() => workspace.remove());

  /** The child completed with a valid report from a MutationReady turn, and the join was satisfied. */
  const expectChildCompleted = async (sessionId: string) => {
    const records = jsonLines((await cli(['show', sessionId, '--json'])).stdout);
    const completed = entriesOfRows(records).filter((record) => record.type === 'delegation.completed').map((record) => record.data);
    expect(completed).toEqual([expect.objectContaining({ taskId: 'w', reportStatus: 'completed', report: expect.objectContaining({ status: 'completed', summary: 'wrote b.txt' }) })]);
    expect(entriesOfRows(records).filter((record) => record.type === 'delegation.failed')).toEqual([]);
    expect(entriesOfRows(records).find((record) => record.type === 'delegation.joined')!.data).toMatchObject({ outcome: 'satisfied', children: [{ taskId: 'w', status: 'completed', reportStatus: 'completed' }] });
    expect(JSON.stringify(records)).not.toContain('mutation.policy_digest_mismatch');
    expect(entriesOfRows(records).at(-1)).toMatchObject({ type: 'session.ended', data: { status: 'completed' } });
    expect(await readFile(join(workspace.path, 'b.txt'), 'utf8')).toBe('beta\n');
    expect((await cli(['replay', sessionId])).code).toBe(0);
  };

  for (const answer of [['--approve', 'write'], ['--yes']]) {
    it(`paused without a TTY, then rein resume ${answer.join(' ')}: the child completes and the join is satisfied`, async () => {
      const run = await cli(['run', 'get b.txt written', '--script', 'script.json']);
      expect(run.code).toBe(3);
      expect(run.stdout).toMatch(/waiting for approval root\/delegation-\d+\/w\/approval-\d+ \(child agent root\/delegation-\d+\/w\): write b\.txt/);
      const sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
      const resumed = await cli(['resume', sessionId, ...answer]);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('↳ task w completed, report completed');
      expect(resumed.stdout).toContain('✓ delegate_task joined (all): satisfied, 1 task(s)');
      await expectChildCompleted(sessionId);
    });
  }

  it('answered on a TTY: the child completes and the join is satisfied', async () => {
    const { stdout } = await promisify(execFile)('python3', [driver, JSON.stringify({ argv: [process.execPath, cliPath, 'run', 'get b.txt written', '--script', 'script.json'], cwd: workspace.path, answers: [{ expect: 'allow\\? \\[y\\]es once', send: 'y\r' }], timeout: 60 })], { env: { ...process.env, HOME: workspace.path } });
    const result = JSON.parse(stdout) as { code: number | null; output: string; answered: number };
    expect(result.answered).toBe(1);
    expect(result.output).toMatch(/approval needed \(root\/delegation-\d+\/w\/approval-\d+\) for child agent root\/delegation-\d+\/w/);
    expect(result.code).toBe(0);
    await expectChildCompleted(/session (s-[\w-]+):/.exec(result.output)![1]!);
  });
});
