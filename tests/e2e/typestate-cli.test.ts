import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';

describe('the typestate from the CLI', () => {
  let workspace: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    workspace = await makeTempDir('rein-typestate-cli-');
    await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify({ turns: [{ text: 'Flying.', toolCalls: [{ name: 'fly', arguments: {} }] }, { text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Done.' }] }));
  });
  afterAll(() => workspace.remove());

  it('rein graph turn prints the turn machine as JSON and as Mermaid', async () => {
    const json = await runInProcess(['graph', 'turn'], { cwd: workspace.path });
    expect(json.code).toBe(0);
    const graph = JSON.parse(json.stdout) as { states: Array<{ id: string; type: string }>; transitions: Array<{ source: string; event: string; targets: string[] }> };
    expect(graph.states.map((state) => state.id)).toEqual(expect.arrayContaining(['turn.callSpec', 'turn.toolRequests', 'turn.toolResults', 'turn.toolUse', 'turn.joinClosed', 'turn.mutationReady', 'turn.blocked']));
    expect(graph.transitions).toContainEqual(expect.objectContaining({ source: 'turn.joinClosed', event: 'always', guard: 'mutationClear', targets: ['turn.mutationReady'] }));
    const mermaid = await runInProcess(['graph', 'turn', '--format', 'mermaid'], { cwd: workspace.path });
    expect(mermaid.stdout.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(mermaid.stdout).toContain('turn_joinClosed --> turn_mutationReady: always [mutationClear]');
    expect((await runInProcess(['graph', 'session', '--format', 'mermaid'], { cwd: workspace.path })).stdout).toContain('session_running_joiningTurn');
    expect((await runInProcess(['graph', 'nope'], { cwd: workspace.path })).code).toBe(2);
    // Every command takes --json (D12): for graph it is --format json.
    const viaJson = await runInProcess(['graph', 'turn', '--json'], { cwd: workspace.path });
    expect([viaJson.code, viaJson.stdout]).toEqual([0, json.stdout]);
    expect((await runInProcess(['graph', 'turn', '--json', '--format', 'mermaid'], { cwd: workspace.path })).code).toBe(2);
    expect((await runInProcess(['graph', 'turn', '--format', 'svg'], { cwd: workspace.path })).code).toBe(2);
  });

  it('rein show --verbose shows each turn stage: a blocked turn, then one that reaches MutationReady (plain show: only the blocked one)', async () => {
    const run = await runInProcess(['run', 'read a.txt', '--script', 'script.json'], { cwd: workspace.path });
    expect(run.code).toBe(0);
    const id = /session (s-[\w-]+):/.exec(run.stdout)![1]!;
    const plain = (await runInProcess(['show', id], { cwd: workspace.path })).stdout;
    expect(plain).toMatch(/turn root:e1: BLOCKED at mutation: tool\.unknown_or_disallowed/);
    expect(plain).not.toMatch(/MutationReady/);
    const shown = (await runInProcess(['show', id, '--verbose'], { cwd: workspace.path })).stdout;
    expect(shown).toMatch(/turn root:e1: BLOCKED at mutation: tool\.unknown_or_disallowed/);
    expect(shown).toMatch(/turn root:e3: join closed b3:/);
    expect(shown).toMatch(/turn root:e3: MutationReady/);
    expect(shown.indexOf('CallSpec')).toBeLessThan(shown.indexOf('requests'));
  });
});
