import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { costScript as script, scriptPrices } from '../support/cost-script.js';

// Each call is recorded at 10,000 input tokens; at $100/M for the model `script` a call costs $1.00. Under --max-cost
// 2.5 the child's second call is refused (spent $2.00 plus its worst case), and the session pauses for its budget.

/** `rein sessions` names a pause for the cost budget as such (`awaiting-budget`), and a resume with more budget clears it. */
describe('rein sessions and the cost budget', () => {
  let workspace: Awaited<ReturnType<typeof makeTempDir>>;
  let env: Record<string, string>;
  let sessionId: string;

  beforeAll(async () => {
    workspace = await makeTempDir('rein-sessions-budget-');
    env = { HOME: workspace.path };
    await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
    await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
    await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify({ prices: scriptPrices }));
    const run = await runInProcess(['run', 'd', '--script', 'script.json', '--yes', '--max-cost', '2.5', '--json'], { cwd: workspace.path, env });
    expect(run.code).toBe(6);
    sessionId = entriesOfRows(jsonLines(run.stdout))[0]!.stream as string;
  });
  afterAll(() => workspace?.remove());

  it('lists a session paused for its cost budget as awaiting-budget, filters by it, and as completed once resumed with more', async () => {
    const listed = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env })).stdout) as Array<{ id: string; status: string }>;
    expect(listed.find((session) => session.id === sessionId)?.status).toBe('awaiting-budget');
    const text = await runInProcess(['sessions'], { cwd: workspace.path, env });
    expect(text.stdout).toMatch(new RegExp(`^${sessionId}\\s+awaiting-budget\\s`, 'm'));
    const filtered = jsonLines((await runInProcess(['sessions', '--status', 'awaiting-budget', '--json'], { cwd: workspace.path, env })).stdout) as Array<{ id: string }>;
    expect(filtered.map((session) => session.id)).toEqual([sessionId]);
    expect(jsonLines((await runInProcess(['sessions', '--status', 'interrupted', '--json'], { cwd: workspace.path, env })).stdout)).toEqual([]);

    const resumed = await runInProcess(['resume', sessionId, '--max-cost', '10', '--yes', '--json'], { cwd: workspace.path, env });
    expect(resumed.code).toBe(0);
    const after = jsonLines((await runInProcess(['sessions', '--json'], { cwd: workspace.path, env })).stdout) as Array<{ id: string; status: string }>;
    expect(after.find((session) => session.id === sessionId)?.status).toBe('completed');
  });
});
