import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, initialTransition, transition, type SnapshotFrom } from 'xstate';
import { turnMachine, type TurnEvent } from '../../machines/turn.machine.js';
import { propertyRuns } from '../support/temp-dir.js';
import { turnInput } from './turn.fixtures.js';

type Snapshot = SnapshotFrom<typeof turnMachine>;
const variants = ['ok', 'not-found', 'schema', 'cancelled', 'denied'] as const;

const settle = (callId: string, name: string, variant: (typeof variants)[number]): TurnEvent => ({
  type: 'tool.settled',
  callId,
  name,
  status: variant === 'ok' ? 'ok' : 'error',
  ...(variant === 'not-found' ? { errorCode: 'NotFound' } : variant === 'schema' ? { errorCode: 'InvalidInput', failedStage: 'schema' } : variant === 'cancelled' ? { errorCode: 'Cancelled' } : variant === 'denied' ? { errorCode: 'Denied', failedStage: 'permission' } : {}),
  observation: `${variant} ${callId}`,
});

const usesFor = (snapshot: Snapshot): TurnEvent => ({
  type: 'turn.uses',
  uses: snapshot.context.results.map((row) => (row.errorCode === 'Cancelled' ? { callId: row.callId, disposition: 'discarded_with_reason', reason: 'cancelled' } : { callId: row.callId, disposition: 'consumed', ref: 'synthesis' })),
});

/** Drive a turn live (a real actor), answering `turn.uses` once it announces its results. */
const runLive = (input: ReturnType<typeof turnInput>, events: readonly TurnEvent[]) => {
  const actor = createActor(turnMachine, { input }).start();
  for (const event of events) actor.send(event);
  if (actor.getSnapshot().matches('toolUse')) actor.send(usesFor(actor.getSnapshot()));
  return { snapshot: actor.getSnapshot() };
};

/** The same events through the pure `transition` function, collecting the witness records it would emit. */
const runPure = (input: ReturnType<typeof turnInput>, events: readonly TurnEvent[]) => {
  let [snapshot, actions] = initialTransition(turnMachine, input);
  const emitted = actions.filter((action) => action.type === 'emitRecord').map((action) => JSON.stringify(action.params));
  for (const event of events) {
    [snapshot, actions] = transition(turnMachine, snapshot, event);
    emitted.push(...actions.filter((action) => action.type === 'emitRecord').map((action) => JSON.stringify(action.params)));
  }
  if (snapshot.matches('toolUse')) {
    [snapshot, actions] = transition(turnMachine, snapshot, usesFor(snapshot));
    emitted.push(...actions.filter((action) => action.type === 'emitRecord').map((action) => JSON.stringify(action.params)));
  }
  return { snapshot, emitted };
};

const turn = fc
  .array(fc.record({ name: fc.constantFrom('read', 'write', 'rm_rf'), variant: fc.constantFrom(...variants) }), { minLength: 1, maxLength: 5 })
  .chain((calls) => fc.tuple(fc.constant(calls), fc.shuffledSubarray(calls.map((_, index) => index), { minLength: calls.length, maxLength: calls.length }), fc.shuffledSubarray(calls.map((_, index) => index), { minLength: calls.length, maxLength: calls.length })));

describe('turn.machine properties', () => {
  it('the join digest and the classes found do not depend on the order results arrive in', () => {
    fc.assert(
      fc.property(turn, ([calls, orderA, orderB]) => {
        const input = turnInput({ names: calls.map((call) => call.name) });
        const eventsIn = (order: number[]) => order.map((index) => settle(input.toolCalls[index]!.callId, calls[index]!.name, calls[index]!.variant));
        const a = runPure(input, eventsIn(orderA)).snapshot;
        const b = runPure(input, eventsIn(orderB)).snapshot;
        expect(a.value).toEqual(b.value);
        expect(a.context.join?.joinDigest).toEqual(b.context.join?.joinDigest);
        expect(a.context.findings.map((finding) => `${finding.class}:${finding.callId}`).sort()).toEqual(b.context.findings.map((finding) => `${finding.class}:${finding.callId}`).sort());
        const clean = calls.length <= input.callSpec.parallelPolicy.maxBranches && calls.every((call) => call.name !== 'rm_rf' && call.variant !== 'schema');
        expect(a.matches('mutationReady')).toBe(clean);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('duplicates and orphans always block, whatever the order', () => {
    fc.assert(
      fc.property(turn, fc.constantFrom('duplicate', 'orphan'), fc.nat(), ([calls, order], kind, at) => {
        const input = turnInput({ names: calls.map((call) => call.name) });
        const events = order.map((index) => settle(input.toolCalls[index]!.callId, calls[index]!.name, calls[index]!.variant));
        const extra = kind === 'duplicate' ? settle(input.toolCalls[0]!.callId, calls[0]!.name, 'ok') : settle('ghost', 'read', 'ok');
        events.splice(kind === 'duplicate' ? events.length : at % (events.length + 1), 0, extra);
        const { snapshot } = runPure(input, events);
        expect(snapshot.matches('mutationReady')).toBe(false);
        expect(snapshot.context.findings.some((finding) => finding.class === 'tool.result_orphan')).toBe(true);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('live (a running actor) equals replay (the pure transition function): same state, context and witnesses', () => {
    fc.assert(
      fc.property(turn, ([calls, order]) => {
        const input = turnInput({ names: calls.map((call) => call.name) });
        const events = order.map((index) => settle(input.toolCalls[index]!.callId, calls[index]!.name, calls[index]!.variant));
        const live = runLive(input, events).snapshot;
        const pure = runPure(input, events).snapshot;
        expect(live.value).toEqual(pure.value);
        expect(live.context).toEqual(pure.context);
      }),
      { numRuns: propertyRuns(150) },
    );
  });
});
