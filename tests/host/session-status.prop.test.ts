import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialStatusState, nextStatusState, statusOfState, statusStateOf } from '../../src/host/session-status.js';
import type { StatusSource } from '../../src/host/session-status.js';

const runs = Number(process.env.FC_RUNS ?? 50);

const effectIds = ['root:e1', 'root:e2', 'root:e3'] as const;
const effectId = fc.constantFrom(...effectIds);
const actor = fc.constantFrom('root', 'root', 'root', 'root/child-1');
const machineTo = fc.constantFrom<unknown>('idle', { running: 'awaitingModel' }, { running: 'awaitingApproval' }, { running: 'runningTools' }, 'completed');

/** Records of the kinds the status fold reads, and a few it must ignore. */
const statusRecord: fc.Arbitrary<StatusSource> = fc.oneof(
  fc.record({ type: fc.constant('session.ended'), actor, data: fc.record({ status: fc.constantFrom('completed', 'failed', 'cancelled', 'budget-exhausted') }) }),
  fc.record({ type: fc.constant('session.interrupted'), actor, data: fc.constant({}) }),
  fc.record({ type: fc.constant('session.resumed'), actor, data: fc.constant({}) }),
  fc.record({ type: fc.constant('actor.transitioned'), actor, data: fc.record({ to: machineTo }) }),
  fc.record({
    type: fc.constant('effect.resolved'),
    actor,
    data: fc.record({ effectId, resolution: fc.constantFrom('awaiting-confirmation', 'rerun', 'settled-from-log', 'abandoned') }),
  }),
  fc.record({ type: fc.constantFrom('tool.settled', 'tool.started', 'effect.requested'), actor, data: fc.record({ effectId }) }),
  fc.record({ type: fc.constantFrom('user.message', 'model.responded', 'context.projected'), actor, data: fc.constant({ text: 'x' }) }),
);

/**
 * The status rules of README `rein sessions`, written a second way: by looking back over the whole log instead of
 * folding forward. A fold bug (a wait that outlives its effect's settlement, an interruption that survives a later
 * transition, a resume that keeps stale waits) makes the two disagree.
 */
const referenceStatus = (records: readonly StatusSource[]): string | undefined => {
  const root = records.filter((record) => record.actor === 'root');
  const ended = root.filter((record) => record.type === 'session.ended').at(-1);
  if (ended) return String((ended.data as { status: unknown }).status);
  const lastWord = root.filter((record) => ['session.interrupted', 'session.resumed', 'actor.transitioned'].includes(record.type)).at(-1);
  if (lastWord?.type === 'session.interrupted') return 'interrupted';
  const lastResume = records.findLastIndex((record) => record.type === 'session.resumed' && record.actor === 'root');
  const waiting = effectIds.some((id) => {
    const lastResolution = records.findLastIndex((record, index) => index > lastResume && record.type === 'effect.resolved' && (record.data as { effectId: string }).effectId === id);
    if (lastResolution < 0 || (records[lastResolution]!.data as { resolution: string }).resolution !== 'awaiting-confirmation') return false;
    // Any later record of that effect ends the wait.
    return !records.some((record, index) => index > lastResolution && (record.data as { effectId?: unknown } | undefined)?.effectId === id);
  });
  if (waiting) return 'awaiting-confirmation';
  const transition = root.filter((record) => record.type === 'actor.transitioned').at(-1);
  if (transition === undefined) return undefined;
  const to = (transition.data as { to: unknown }).to;
  if (to === 'idle') return 'idle';
  return typeof to === 'object' && to !== null && (to as { running?: unknown }).running === 'awaitingApproval' ? 'awaiting-approval' : 'active';
};

describe('the session status fold', () => {
  it('agrees with the look-back reading of the same log', () => {
    fc.assert(
      fc.property(fc.array(statusRecord, { maxLength: 40 }), (records) => {
        expect(statusOfState(statusStateOf(records))).toBe(referenceStatus(records));
      }),
      { numRuns: runs * 20 },
    );
  });

  it('gives the same state folded batch by batch (as the writer does) as folded over the whole log', () => {
    fc.assert(
      fc.property(fc.array(statusRecord, { maxLength: 40 }), fc.array(fc.nat({ max: 40 }), { maxLength: 6 }), (records, cuts) => {
        const bounds = [...new Set([0, ...cuts.map((cut) => Math.min(cut, records.length)), records.length])].sort((left, right) => left - right);
        let state = initialStatusState;
        for (let index = 1; index < bounds.length; index++) state = statusStateOf(records.slice(bounds[index - 1], bounds[index]), state);
        expect(state).toEqual(statusStateOf(records));
      }),
      { numRuns: runs * 10 },
    );
  });

  it('never changes the state it is given', () => {
    fc.assert(
      fc.property(fc.array(statusRecord, { maxLength: 20 }), statusRecord, (records, next) => {
        const state = statusStateOf(records);
        const copy = structuredClone(state);
        nextStatusState(state, next);
        expect(state).toEqual(copy);
      }),
      { numRuns: runs * 10 },
    );
  });
});
