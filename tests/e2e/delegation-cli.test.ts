import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

const script = fileURLToPath(new URL('../fixtures/delegation/three-children.script.json', import.meta.url));

describe('rein run with delegation, then rein trace', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  let sessionId: string;
  let run: Awaited<ReturnType<typeof runInProcess>>;
  const cwd = () => ({ cwd: workspace.path });

  beforeAll(async () => {
    workspace = await makeTempDir('rein-delegation-cli-');
    await writeFile(join(workspace.path, 'add.js'), 'export const add = (a, b) => a + b;\n');
    await copyFile(script, join(workspace.path, 'script.json'));
    run = await runInProcess(['run', 'Check add.js', '--script', 'script.json'], cwd());
    sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
  });
  afterAll(() => workspace.remove());

  it('a scripted session delegates to an explorer and a reviewer (join all), then a tester (join first-success), and completes', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/↳ task map \(explorer\) started as root\/delegation-\d+\/map/);
    expect(run.stdout).toMatch(/\[review\] ✓ submit_report/);
    expect(run.stdout).toContain('✓ delegate_task joined (all): satisfied, 2 task(s)');
    expect(run.stdout).toContain('✓ delegate_task joined (first-success): satisfied, 1 task(s)');
  });

  it('rein trace shows each child linked to the call that delegated it, and the child\'s own turns under its path', async () => {
    const trace = await runInProcess(['trace', sessionId], cwd());
    expect(trace.code).toBe(0);
    const text = trace.stdout;
    for (const [task, role, mode] of [['map', 'explorer', 'summary'], ['review', 'reviewer', 'clean'], ['tests', 'tester', 'fork']]) {
      const line = new RegExp(`↳ task ${task} \\(${role}, ${mode}\\) (root/delegation-\\d+/${task}) #\\d+: completed, report completed #\\d+`).exec(text);
      expect(line, `${task} is linked to its delegate_task call`).not.toBeNull();
      expect(text).toContain(`[${line![1]}]`);
    }
    expect(text).toMatch(/delegate_task\(.*\) #\d+ → permission allow .* → ok #(\d+)\n(?:    ↳ task .*\n)+    ↳ joined \(all\) #\1: satisfied/);
    expect(text).toMatch(/↳ joined \(first-success\) #\d+: satisfied/);
  });

  it('rein replay verifies the whole tree, children included', async () => {
    const replay = await runInProcess(['replay', sessionId, '--json'], cwd());
    expect(replay.code).toBe(0);
    const [summary] = jsonLines(replay.stdout);
    expect(summary).toMatchObject({ sessionId });
    expect(summary!.verified).toBe(summary!.head);
    const dryRun = await runInProcess(['replay', sessionId, '--dry-run'], cwd());
    expect(dryRun.stdout).toContain(', 0 would now be decided differently; nothing was executed');
    const records = jsonLines((await runInProcess(['show', sessionId, '--json'], cwd())).stdout);
    // delegation.* records are entries of step records (proposed is an input, the rest were derived).
    const types = entriesOfRows(records).map((record) => record.type);
    for (const type of ['delegation.proposed', 'delegation.validated', 'delegation.accepted', 'delegation.started', 'delegation.completed', 'delegation.joined']) expect(types).toContain(type);
  });

  it('rein graph delegation prints the fan-out and join machine', async () => {
    const graph = await runInProcess(['graph', 'delegation', '--format', 'mermaid'], cwd());
    expect(graph.code).toBe(0);
    expect(graph.stdout).toContain('delegation_running --> delegation_joined: always [joinDecided]');
    expect(graph.stdout).toContain('delegation_running --> delegation_cancelled: delegation.cancel');
  });
});

describe('a tester\'s report is checked against the commands it ran (trial5 E9)', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-delegation-claim-');
    await writeFile(join(workspace.path, 'keep.txt'), 'keep\n');
    // t1 runs `rm keep.txt` (denied) and `true`, then reports `npm test` as passed; t2 runs `true` and reports it.
    const claim = { status: 'completed', summary: 'all pass', command: 'npm test', exit_code: 0, passed: true, failing_tests: [], relevant_output: 'ok' };
    const script = {
      turns: [
        { text: 'delegating', toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 't1', role: 'tester', objective: 'run the tests' }, { id: 't2', role: 'tester', objective: 'run true' }], join: { policy: 'all' } } }] },
        { text: 'Done.' },
      ],
      agents: {
        tester: {
          turns: [
            { text: 't', toolCalls: [{ name: 'bash', arguments: { command: 'rm keep.txt' } }, { name: 'bash', arguments: { command: 'true' } }] },
            { text: 'r', toolCalls: [{ name: 'submit_report', arguments: claim }] },
            { text: 'end' },
          ],
        },
      },
    };
    await writeFile(join(workspace.path, 'claim.json'), JSON.stringify(script));
    const honest = { ...script, turns: [{ ...script.turns[0], toolCalls: [{ name: 'delegate_task', arguments: { tasks: [{ id: 't2', role: 'tester', objective: 'run true' }] } }] }, script.turns[1]], agents: { tester: { turns: [{ text: 't', toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }, { text: 'r', toolCalls: [{ name: 'submit_report', arguments: { ...claim, command: 'true', summary: 'true exits 0' } }] }] } } };
    await writeFile(join(workspace.path, 'honest.json'), JSON.stringify(honest));
  });
  afterAll(() => workspace.remove());

  it('a report of `npm test` passing that no command bears out is refused, the child fails its contract and the join is unsatisfied', async () => {
    const run = await runInProcess(['run', 'd', '--script', 'claim.json', '--deny', 'bash:rm *', '--yes'], { cwd: workspace.path });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\[t1\] ✗ submit_report npm test InvalidInput/);
    expect(run.stdout).toMatch(/↳ task t1 failed \(contract\)/);
    expect(run.stdout).toContain('✓ delegate_task joined (all): unsatisfied, 2 task(s)');
    const sessionId = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const records = jsonLines((await runInProcess(['show', sessionId, '--json'], { cwd: workspace.path })).stdout);
    const rejected = entriesOfRows(records).filter((record) => record.type === 'tool.rejected' && record.data.code === 'report_unverified');
    expect(rejected.length).toBeGreaterThanOrEqual(1);
    expect(rejected[0]!.data.message).toContain('no command "npm test" ran in this task');
    const joined = entriesOfRows(records).find((record) => record.type === 'delegation.joined')!;
    expect(joined.data.outcome).toBe('unsatisfied');
    expect(joined.data.observation).not.toContain('"exit_code": 0');
    expect(entriesOfRows(records).some((record) => record.type === 'delegation.completed' && record.data.taskId === 't1')).toBe(false);
    const replay = await runInProcess(['replay', sessionId, '--json'], { cwd: workspace.path });
    expect(replay.code).toBe(0);
  });

  it('a report that restates the run it rests on is accepted and joined', async () => {
    const run = await runInProcess(['run', 'd', '--script', 'honest.json', '--yes'], { cwd: workspace.path });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\[t2\] ✓ submit_report true/);
    expect(run.stdout).toContain('✓ delegate_task joined (all): satisfied, 1 task(s)');
  });
});
