import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, type SnapshotFrom } from 'xstate';
import { childSessionMachine, sessionMachine, type SessionEvent } from '../../machines/session.machine.js';
import { budgetRaiseRefusalOf } from '../../machines/session/session-budget.js';
import { refuseBudgetRaise } from '../../src/session/budget-raise.js';
import { ReinError } from '../../src/host/host-errors.js';
import { propertyRuns } from '../support/temp-dir.js';

const budgets = { maxTurns: 1, maxToolCalls: 3, maxTokens: 1_000, maxWallTimeMs: 10_000 };

/** A machine of the given form driven to `budgetExhausted`: one final reply that spends the turn, then a message. */
const spent = (machine: typeof sessionMachine | typeof childSessionMachine) => {
  const actor = createActor(machine, { input: { path: 'root', sessionId: 's-raise', budgets, mutationPolicyDigest: 'b3:policy', conversation: true } });
  actor.start();
  actor.send({ type: 'user.message', text: 'go' });
  const effectId = actor.getSnapshot().context.awaitingModel!;
  actor.send({ type: 'model.responded', effectId, turn: 1, text: 'ok', toolCalls: [], stopReason: 'end_turn', usage: { inputTokens: 40, outputTokens: 2 }, elapsedMs: 5 } as SessionEvent);
  actor.send({ type: 'user.message', text: 'more' });
  return actor;
};

/** Any value a caller could put in a limit: whole numbers around what is spent, fractions, non-finite, huge. */
const limit = fc.oneof(fc.integer({ min: -3, max: 60 }), fc.double({ noDefaultInfinity: false }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2, 2 ** 53));
const raise = fc.record({ maxTurns: limit, maxToolCalls: limit, maxTokens: limit, maxWallTimeMs: limit }, { requiredKeys: [] });

describe('raising a spent budget: the machine and resume agree on every value (property)', () => {
  it('the root leaves budgetExhausted exactly when the raise applies; resume refuses (BUDGET_NOT_RAISED) every raise it would not', () => {
    fc.assert(
      fc.property(raise, (given) => {
        const actor = spent(sessionMachine);
        const before: SnapshotFrom<typeof sessionMachine> = actor.getSnapshot();
        expect(before.value).toBe('budgetExhausted');
        const refusal = budgetRaiseRefusalOf(before.context, given);
        let resumeRefused: ReinError | undefined;
        try {
          refuseBudgetRaise('s-raise', { value: before.value, context: before.context, done: true }, given, { elapsedMs: 5 });
        } catch (error) {
          resumeRefused = error as ReinError;
        }
        actor.send({ type: 'session.budgets-raised', ...given } as SessionEvent);
        const after = actor.getSnapshot();
        actor.stop();
        if (refusal !== undefined) {
          // Not applied: nothing changes, and resume refused it first.
          expect(after.value).toBe('budgetExhausted');
          expect(after.context).toEqual(before.context);
          expect(resumeRefused?.code).toBe('BUDGET_NOT_RAISED');
          return;
        }
        // Applied: the given limits hold; resume lets it through only when the session really goes on.
        for (const key of ['maxTurns', 'maxToolCalls', 'maxTokens', 'maxWallTimeMs'] as const) expect(after.context.budgets[key]).toBe(given[key] ?? budgets[key]);
        if (resumeRefused) {
          expect(resumeRefused).toBeInstanceOf(ReinError);
          expect(resumeRefused.code).toBe('BUDGET_NOT_RAISED');
          expect(after.value).toBe('budgetExhausted');
        } else {
          expect(after.value).toEqual({ running: 'awaitingModel' });
          expect(after.context.outcome).toBeNull();
        }
      }),
      { numRuns: propertyRuns(150) },
    );
  });

  it('an interrupted root (a model call in flight) takes a raise in place exactly when it applies; resume agrees', () => {
    fc.assert(
      fc.property(raise, (given) => {
        // A turn taken and answered with a read, the second call in flight: what a resume of an interrupted run rebuilds.
        const actor = createActor(sessionMachine, { input: { path: 'root', sessionId: 's-raise', budgets: { ...budgets, maxTurns: 10 }, mutationPolicyDigest: 'b3:policy' } });
        actor.start();
        actor.send({ type: 'user.message', text: 'go' });
        const before = actor.getSnapshot();
        expect(before.value).toEqual({ running: 'awaitingModel' });
        const refusal = budgetRaiseRefusalOf(before.context, given);
        let resumeRefused: ReinError | undefined;
        try {
          refuseBudgetRaise('s-raise', { value: before.value, context: before.context, done: false }, given, { elapsedMs: 5 });
        } catch (error) {
          resumeRefused = error as ReinError;
        }
        actor.send({ type: 'session.budgets-raised', ...given } as SessionEvent);
        const after = actor.getSnapshot();
        actor.stop();
        // The state never changes: the call in flight is still awaited.
        expect(after.value).toEqual({ running: 'awaitingModel' });
        if (refusal !== undefined) {
          expect(after.context).toEqual(before.context);
          expect(resumeRefused?.code).toBe('BUDGET_NOT_RAISED');
          return;
        }
        expect(after.context).toEqual({ ...before.context, budgets: { ...before.context.budgets, ...given } });
        // Resume refuses only a raise that leaves a budget spent (here: one limit at or below what one turn took).
        if (resumeRefused) expect(resumeRefused.message).toMatch(/still spent|wall-time budget is spent/);
      }),
      { numRuns: propertyRuns(150) },
    );
  });

  it('a spent tool-call budget is lifted only by a tool-call limit above the calls made', () => {
    const actor = createActor(sessionMachine, { input: { path: 'root', sessionId: 's-raise', budgets: { ...budgets, maxTurns: 10, maxToolCalls: 1 }, mutationPolicyDigest: 'b3:policy' } });
    actor.start();
    actor.send({ type: 'user.message', text: 'go' });
    const effectId = actor.getSnapshot().context.awaitingModel!;
    const read = (callId: string) => ({ callId, name: 'read', arguments: { path: 'a.txt' } });
    actor.send({ type: 'model.responded', effectId, turn: 1, text: 'reading', toolCalls: [read('c1'), read('c2')], stopReason: 'tool_use', usage: { inputTokens: 40, outputTokens: 2 }, elapsedMs: 5 } as SessionEvent);
    const turn = actor.getSnapshot();
    expect(turn.context.tally.toolCallBudgetSpent).toMatch(/^tool-call budget exhausted/);
    // A raise of the turns alone is not taken: the join would end the session again at once.
    const tree = (snapshot: typeof turn) => ({ value: snapshot.value, context: snapshot.context, done: false });
    expect(() => refuseBudgetRaise('s-raise', tree(turn), { maxTurns: 20 }, { elapsedMs: 5 })).toThrow(/tool-call budget is spent.*--max-tool-calls/);
    expect(() => refuseBudgetRaise('s-raise', tree(turn), { maxToolCalls: 1 }, { elapsedMs: 5 })).toThrow(/maxToolCalls 1 is not above the 1 tool call\(s\) already made/);
    // Raised while the turn is still open (an interrupted run): the verdict is lifted, the join goes on to the next turn.
    actor.send({ type: 'session.budgets-raised', maxToolCalls: 5 } as SessionEvent);
    expect(actor.getSnapshot().context.tally.toolCallBudgetSpent).toBeNull();
    expect(actor.getSnapshot().context.budgets.maxToolCalls).toBe(5);
    actor.stop();
  });

  it("a child's spent budget is final: a raise never reaches or changes it", () => {
    const actor = spent(childSessionMachine);
    expect(actor.getSnapshot().status).toBe('done');
    actor.send({ type: 'session.budgets-raised', maxTurns: 10 } as SessionEvent);
    expect(actor.getSnapshot().value).toBe('budgetExhausted');
    expect(actor.getSnapshot().context.budgets.maxTurns).toBe(1);
  });
});
