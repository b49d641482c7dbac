import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolHarness, type ToolHarness } from '../support/tool-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import { planChecklist, planLine } from '../../src/projections/plan-text.js';

describe('update_plan', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let harness: ToolHarness;
  beforeAll(async () => {
    dir = await makeTempDir('rein-plan-');
    // Default mode, no rule: a read-only tool never asks.
    harness = await toolHarness(dir.path, { permissions: {} });
  });
  afterAll(() => dir.remove());

  it('records the whole plan as data and shows it as a checklist, without asking', async () => {
    const plan = [{ step: 'read the failing test', status: 'completed' }, { step: 'fix the sum', status: 'in_progress' }, { step: 'run the tests', status: 'pending' }];
    const result = await harness.run('update_plan', { plan, explanation: 'found the bug' });
    expect(result.status).toBe('ok');
    expect(result.observation).toBe('plan updated (1 of 3 done)\n[x] read the failing test\n[>] fix the sum\n[ ] run the tests');
    expect(result.facts.find((fact) => fact.type === 'plan.updated')?.data).toEqual({ effectId: 'root:e1', callId: 'c1', plan, explanation: 'found the bug' });
  });

  it('refuses two steps in progress, and a malformed step, as model-visible errors', async () => {
    const two = await harness.run('update_plan', { plan: [{ step: 'a', status: 'in_progress' }, { step: 'b', status: 'in_progress' }] });
    expect(two.errorCode).toBe('InvalidInput');
    expect(two.observation).toContain('at most one step in_progress');
    expect(two.facts.some((fact) => fact.type === 'plan.updated')).toBe(false);
    expect((await harness.run('update_plan', { plan: [{ step: 'a', status: 'done' }] })).errorCode).toBe('InvalidInput');
  });

  it('renders an empty plan and each status compactly', () => {
    expect(planChecklist([])).toEqual([]);
    expect(planChecklist([{ step: 's', status: 'pending' }])).toEqual(['[ ] s']);
    expect(planLine({ plan: [{ step: 'a', status: 'completed' }, { step: 'b', status: 'in_progress' }], explanation: 'why' })).toBe('plan (1 of 2 done): [x] a · [>] b — why');
  });
});
