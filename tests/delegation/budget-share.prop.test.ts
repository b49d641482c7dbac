import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { fairShares, shareBudgets } from '../../machines/delegation/budget-share.js';
import { testerTask } from '../support/delegation-fixtures.js';
import { delegationMachine } from '../../machines/delegation.machine.js';
import type { DelegationStarted } from '../../models/delegation.records.js';
import { propertyRuns } from '../support/temp-dir.js';

const budgets = fc.record({
  maxTurns: fc.integer({ min: 0, max: 40 }),
  maxToolCalls: fc.integer({ min: 0, max: 80 }),
  maxTokens: fc.integer({ min: 0, max: 5_000 }),
  maxWallTimeMs: fc.integer({ min: 1, max: 600_000 }),
});
/** A parent's remaining budgets: what it has left may already be below nothing (spent past it in its last reply). */
const ceiling = fc.record({
  maxTurns: fc.integer({ min: -3, max: 60 }),
  maxToolCalls: fc.integer({ min: -3, max: 120 }),
  maxTokens: fc.integer({ min: -10, max: 8_000 }),
  maxWallTimeMs: fc.integer({ min: -10, max: 600_000 }),
});

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

const task = testerTask;

describe('children share their parent budgets (trial5 E38)', () => {
  it('fair shares: none above its want, never more than there is, all of it when wanted, and max-min fair', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: -5, max: 300 }), (wants, available) => {
        const shares = fairShares(wants, available);
        expect(shares).toHaveLength(wants.length);
        shares.forEach((share, index) => {
          expect(share).toBeGreaterThanOrEqual(0);
          expect(share).toBeLessThanOrEqual(wants[index]!);
        });
        expect(sum(shares)).toBe(Math.min(Math.max(0, available), sum(wants)));
        // A task left short of its want got at least as much as any other task, but one.
        shares.forEach((share, index) => {
          if (share < wants[index]!) for (const other of shares) expect(other).toBeLessThanOrEqual(share + 1);
        });
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('the delegation machine starts its children on shares that together fit what the parent had left, keeping it a turn', () => {
    const machine = delegationMachine.provide({ actors: { agent: createMachine({ id: 'stand-in' }) } });
    fc.assert(
      fc.property(fc.array(budgets, { minLength: 1, maxLength: 8 }), ceiling, (wanted, left) => {
        const started: DelegationStarted[] = [];
        const actor = createActor(
          machine.provide({ actions: { emitRecord: (_: unknown, params: { type: string; data: Record<string, unknown> }) => void (params.type === 'delegation.started' && started.push(params.data as unknown as DelegationStarted)) } }),
          { input: { path: 'root/delegation-2', sessionId: 's', parent: 'root', callId: 'root:e1.0', plan: { tasks: wanted.map((want, index) => task(`t${index}`, want)), join: { policy: 'all' }, observationLimit: 4_000 }, ceiling: left, startedAtMs: 0 } },
        );
        actor.start();
        const given = started.map((record) => record.task.budgets);
        expect(given).toEqual(shareBudgets(wanted, left));
        expect(sum(given.map((child) => child.maxTurns))).toBeLessThanOrEqual(Math.max(0, left.maxTurns - 1));
        expect(sum(given.map((child) => child.maxToolCalls))).toBeLessThanOrEqual(Math.max(0, left.maxToolCalls));
        expect(sum(given.map((child) => child.maxTokens))).toBeLessThanOrEqual(Math.max(0, left.maxTokens));
        given.forEach((child, index) => {
          expect(child.maxTurns).toBeLessThanOrEqual(wanted[index]!.maxTurns);
          expect(child.maxToolCalls).toBeLessThanOrEqual(wanted[index]!.maxToolCalls);
          expect(child.maxTokens).toBeLessThanOrEqual(wanted[index]!.maxTokens);
          expect(child.maxWallTimeMs).toBe(Math.max(1, Math.min(wanted[index]!.maxWallTimeMs, left.maxWallTimeMs)));
        });
        actor.stop();
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});
