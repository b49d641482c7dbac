import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DelegateTaskArguments, DelegationPlan } from '../../models/delegation.records.js';
import type { PermissionMode } from '../../models/permission.records.js';
import { modeWithin, type DelegationScope } from '../../src/delegation/actor-rights.js';
import { resolvePlan } from '../../src/delegation/resolve-plan.js';
import { defaultDelegationConfig } from '../../src/delegation/roles.js';
import { propertyRuns } from '../support/temp-dir.js';

const allTools = ['read', 'list_dir', 'glob', 'grep', 'read_artifact', 'bash', 'write', 'edit', 'edit_lines', 'delegate_task', 'memory_read'];
const mutating = new Set(['bash', 'write', 'edit', 'edit_lines']);
const modes: PermissionMode[] = ['plan', 'default', 'accept-edits'];

const scopeOf = (tools: string[], mode: PermissionMode, depth: number): DelegationScope => ({
  parent: { path: depth === 0 ? 'root' : 'root/delegation-1/t', depth, tools, mode },
  config: defaultDelegationConfig,
  // Plan mode hides whatever changes something, as the real policy does.
  isVisible: (childMode, tool) => allTools.includes(tool) && !(childMode === 'plan' && mutating.has(tool)),
  policyDigest: (childMode) => `b3:${childMode}`,
  observationLimit: 16_000,
});

const task = fc.record(
  {
    id: fc.constantFrom('a', 'b', 'c', 't1', 'x_2'),
    role: fc.constantFrom('explorer', 'worker', 'reviewer', 'tester', 'security'),
    objective: fc.string({ minLength: 1, maxLength: 40 }),
    context_mode: fc.constantFrom('clean', 'summary', 'fork'),
    tool_policy: fc.record(
      { inheritance: fc.constantFrom('intersection', 'subset', 'isolated'), tools: fc.subarray([...allTools, 'deploy']), permission_mode: fc.constantFrom(...modes) },
      { requiredKeys: [] },
    ),
    output_contract: fc.oneof(
      fc.constantFrom('finding-report', 'test-report', 'review-report', 'patch-proposal'),
      fc.record({ format: fc.constantFrom('finding-report', 'test-report', 'review-report', 'patch-proposal'), required_fields: fc.oneof({ weight: 4, arbitrary: fc.subarray(['unknowns', 'out_of_scope']) }, { weight: 1, arbitrary: fc.subarray(['risks', 'environment_notes', 'verification', 'nonsense']) }) }),
    ),
    budgets: fc.record({ max_turns: fc.integer({ min: 1, max: 500 }), max_wall_time_ms: fc.integer({ min: 1_000, max: 86_400_000 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: ['id', 'role', 'objective'] },
);

const packageOf = fc.record(
  {
    // Mostly distinct ids (a duplicate is one of the refusals checked), mostly small k.
    tasks: fc.oneof({ weight: 4, arbitrary: fc.uniqueArray(task, { selector: (entry) => entry.id, minLength: 1, maxLength: 5 }) }, { weight: 1, arbitrary: fc.array(task, { minLength: 1, maxLength: 8 }) }),
    join: fc.oneof(fc.record({ policy: fc.constantFrom('all', 'any', 'first-success') }), fc.record({ policy: fc.constant('quorum'), k: fc.integer({ min: 1, max: 6 }) }, { requiredKeys: ['policy'] })),
  },
  { requiredKeys: ['tasks'] },
);

describe('resolving a delegate_task package under the rights ceiling', () => {
  it('either refuses before any child starts (validation or capability, with a reason and options) or yields a plan no child of which exceeds its parent', () => {
    // Counted, so the property cannot pass by refusing everything: each outcome must actually occur.
    const seen = { ok: 0, validation: 0, capability: 0 };
    const runs = propertyRuns(1_000);
    fc.assert(
      fc.property(packageOf, fc.oneof(fc.constant(allTools), fc.subarray(allTools)), fc.constantFrom(...modes), fc.constantFrom(0, 0, 0, 1), (raw, parentTools, parentMode, depth) => {
        const parsed = DelegateTaskArguments.safeParse(raw);
        if (!parsed.success) return; // the schema stage answers InvalidInput before resolution
        const resolution = resolvePlan(parsed.data, scopeOf(parentTools, parentMode, depth));
        seen[resolution.ok ? 'ok' : resolution.failureClass]++;
        if (!resolution.ok) {
          expect(['validation', 'capability']).toContain(resolution.failureClass);
          expect(resolution.reason.length).toBeGreaterThan(0);
          expect(resolution.options.length).toBeGreaterThan(0);
          return;
        }
        expect(DelegationPlan.safeParse(resolution.plan).success).toBe(true);
        expect(depth).toBeLessThan(defaultDelegationConfig.maxDepth);
        expect(resolution.plan.tasks.map((entry) => entry.taskId)).toEqual(parsed.data.tasks.map((entry) => entry.id));
        expect(new Set(resolution.plan.tasks.map((entry) => entry.taskId)).size).toBe(resolution.plan.tasks.length);
        for (const child of resolution.plan.tasks) {
          for (const tool of child.tools) expect(parentTools, `${child.taskId} got ${tool}`).toContain(tool);
          expect(modeWithin(child.permissionMode, parentMode)).toBe(true);
          for (const tool of child.tools) expect(tool === 'delegate_task' || !(child.permissionMode === 'plan' && mutating.has(tool))).toBe(true);
          expect(child.depth).toBe(depth + 1);
        }
        if (resolution.plan.join.policy === 'quorum') expect(resolution.plan.join.k).toBeLessThanOrEqual(resolution.plan.tasks.length);
      }),
      { numRuns: runs },
    );
    expect(seen.ok, JSON.stringify(seen)).toBeGreaterThanOrEqual(Math.ceil(runs * 0.02));
    expect(seen.validation, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(seen.capability, JSON.stringify(seen)).toBeGreaterThan(0);
  });

  it('refuses duplicate task ids and a quorum without k as validation failures', () => {
    const scope = scopeOf(allTools, 'accept-edits', 0);
    const duplicate = resolvePlan({ tasks: [{ id: 'a', role: 'explorer', objective: 'x' }, { id: 'a', role: 'explorer', objective: 'y' }] }, scope);
    expect(duplicate).toMatchObject({ ok: false, failureClass: 'validation' });
    expect(resolvePlan({ tasks: [{ id: 'a', role: 'explorer', objective: 'x' }], join: { policy: 'quorum' } }, scope)).toMatchObject({ ok: false, failureClass: 'validation' });
    expect(resolvePlan({ tasks: [{ id: 'a', role: 'tester', objective: 'x' }] }, scopeOf(['read'], 'default', 0))).toMatchObject({ ok: false, failureClass: 'capability' });
  });
});
