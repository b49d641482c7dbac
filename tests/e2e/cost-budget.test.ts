import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesOfRows, jsonLines } from '../support/cli.js';
import { runInProcess } from '../support/cli-in-process.js';
import { makeTempDir } from '../support/temp-dir.js';
import { costScript as script, scriptPrices } from '../support/cost-script.js';
import { costFlag } from '../../src/cli/budget-options.js';

// Every model call of this script is recorded as 10,000 input tokens; at $100 per million a call costs $1.00.

const workspaceWith = async (config: Record<string, unknown>) => {
  const workspace = await makeTempDir('rein-cost-budget-');
  await writeFile(join(workspace.path, 'a.txt'), 'hello\n');
  await writeFile(join(workspace.path, 'script.json'), JSON.stringify(script));
  await writeFile(join(workspace.path, 'rein.config.json'), JSON.stringify(config));
  return workspace;
};

describe('--max-cost: the whole tree shares one cost budget, checked before each model call', () => {
  it('pauses before the call that could pass it (a child\'s, after $2 spent), exits 6, and a resume with a higher budget completes', async () => {
    const workspace = await workspaceWith({ prices: scriptPrices });
    try {
      const run = await runInProcess(['run', 'd', '--script', 'script.json', '--yes', '--max-cost', '2.5', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(6);
      const rows = entriesOfRows(jsonLines(run.stdout));
      const id = rows[0]!.stream as string;
      // The root's first call and the child's first call ran ($2); the child's second call (worst case: its counted
      // input and 8,192 output tokens at $100/M, over $0.50) was never made.
      expect(rows.filter((row) => row.type === 'model.responded').map((row) => row.actor)).toEqual(['root', 'root/delegation-2/e1']);
      const paused = rows.find((row) => row.type === 'session.interrupted')!;
      const stop = paused.data.budget as Record<string, number | string>;
      expect(stop).toMatchObject({ code: 'COST_BUDGET_REACHED', actor: 'root/delegation-2/e1', model: 'script', limitUsd: 2.5, reservedUsd: 0, maxOutputTokens: 8192 });
      expect(stop.spentUsd).toBeCloseTo(2, 9);
      expect(Number(stop.spentUsd) + Number(stop.worstCaseUsd)).toBeGreaterThan(2.5);
      expect(stop.worstCaseUsd).toBeCloseTo((Number(stop.inputTokens) * 100 + 8192 * 100) / 1e6, 9);
      expect(paused.data.reason).toContain(`rein resume ${id} --max-cost`);
      // Resumed with the same budget it pauses again before the same call: nothing is spent.
      const again = await runInProcess(['resume', id, '--json'], { cwd: workspace.path });
      expect(again.code, again.stderr).toBe(6);
      const head = Math.max(...rows.map((row) => Number(row.seq)));
      expect(entriesOfRows(jsonLines(again.stdout)).filter((row) => Number(row.seq) > head && row.type === 'model.responded')).toEqual([]);
      // A higher budget is recorded with the resume, and the session completes: $4 for four calls of the tree.
      const resumed = await runInProcess(['resume', id, '--max-cost', '10', '--json'], { cwd: workspace.path });
      expect(resumed.code, resumed.stderr).toBe(0);
      const after = entriesOfRows(jsonLines(resumed.stdout)).filter((row) => Number(row.seq) > head);
      expect(after.filter((row) => row.type === 'session.resumed').map((row) => row.data.maxCostUsd)).toEqual([undefined, 10]);
      expect(after.filter((row) => row.type === 'model.responded').map((row) => row.actor)).toEqual(['root/delegation-2/e1', 'root']);
      expect(after.find((row) => row.type === 'session.ended' && row.actor === 'root')?.data).toMatchObject({ status: 'completed' });
      const show = await runInProcess(['show', id], { cwd: workspace.path });
      expect(show.stdout).toContain('cost: $4.00');
      const trace = await runInProcess(['trace', id], { cwd: workspace.path });
      expect(trace.stdout).toMatch(/cost: \$4\.00 — root \$2\.0000 \(2 calls\), root\/delegation-2\/e1 \$2\.0000 \(2 calls\)/);
      expect((await runInProcess(['replay', id], { cwd: workspace.path })).code).toBe(0);
    } finally {
      await workspace.remove();
    }
  });

  it('a budget in rein.config.json applies to new sessions; a model with no price is refused up front (PRICE_UNKNOWN, exit 2, nothing recorded)', async () => {
    const workspace = await workspaceWith({ budgets: { maxCostUsd: 1.5 }, prices: scriptPrices });
    try {
      const run = await runInProcess(['run', 'd', '--script', 'script.json', '--yes', '--json'], { cwd: workspace.path });
      expect(run.code, run.stderr).toBe(6);
      const rows = entriesOfRows(jsonLines(run.stdout));
      expect(rows[0]?.data).toMatchObject({ budgets: { maxCostUsd: 1.5 } });
      expect(rows.filter((row) => row.type === 'model.responded')).toHaveLength(1);
      // A model no price names: the budget could not be checked, so nothing runs (no endpoint is contacted either).
      const refused = await runInProcess(['run', 'd', '--provider', 'openai', '--model', 'unpriced-model', '--base-url', 'http://127.0.0.1:9/v1', '--max-cost', '1', '--json'], { cwd: workspace.path, env: { OPENAI_API_KEY: 'sk-test' } });
      expect(refused.stderr).toContain('PRICE_UNKNOWN');
      expect(refused.code).toBe(2);
      const sessions = await runInProcess(['sessions', '--json'], { cwd: workspace.path });
      expect(sessions.stdout.trim().split('\n').filter(Boolean)).toHaveLength(1);
    } finally {
      await workspace.remove();
    }
  });

  it('a bad --max-cost is a usage error before anything runs', async () => {
    for (const value of ['0', '-1', '1e3', '$5', 'abc', '.', '']) expect(() => costFlag(value), value).toThrow(expect.objectContaining({ code: 'USAGE' }));
    expect([costFlag('5'), costFlag('0.25'), costFlag('.5'), costFlag('2.')]).toEqual([5, 0.25, 0.5, 2]);
    const workspace = await workspaceWith({});
    try {
      const run = await runInProcess(['run', 'd', '--script', 'script.json', '--max-cost', '-1'], { cwd: workspace.path });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('USAGE: --max-cost');
    } finally {
      await workspace.remove();
    }
  });
});
