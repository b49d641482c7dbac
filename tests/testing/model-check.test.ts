import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { checkMachine } from 'rein/testing';

/** A door that can be opened while locked: the planted bug the checker must find. */
const door = setup({ types: { context: {} as { locked: boolean }, events: {} as { type: 'lock' } | { type: 'unlock' } | { type: 'open' } | { type: 'close' } } }).createMachine({
  context: { locked: false },
  initial: 'closed',
  states: {
    closed: { on: { lock: { actions: assign({ locked: true }) }, unlock: { actions: assign({ locked: false }) }, open: 'opened' } },
    opened: { on: { close: 'closed' } },
  },
});

describe('checkMachine', () => {
  it('reports a violated state invariant with the shortest path to it', () => {
    const result = checkMachine({
      machine: door,
      events: () => [{ type: 'lock' as const }, { type: 'unlock' as const }, { type: 'open' as const }, { type: 'close' as const }],
      stateInvariants: { 'a locked door stays closed': (snapshot) => !(snapshot.matches('opened') && snapshot.context.locked) },
    });
    expect(result.states).toBe(4);
    expect(result.violations).toHaveLength(1);
    expect(result.violations[0]).toMatchObject({ invariant: 'a locked door stays closed', path: ['lock', 'open'] });
  });

  it('reports a violated transition invariant with the event that broke it', () => {
    const result = checkMachine({
      machine: door,
      events: () => [{ type: 'lock' as const }, { type: 'open' as const }],
      transitionInvariants: { 'open is refused when locked': ({ from, event, to }) => !(event.type === 'open' && from.matches('closed') && from.context.locked && to.matches('opened')) },
    });
    expect(result.violations.map((violation) => violation.event)).toEqual(['open']);
  });

  it('passes a machine that holds its invariants', () => {
    const result = checkMachine({ machine: door, events: () => [{ type: 'open' as const }, { type: 'close' as const }], stateInvariants: { 'never locked': (snapshot) => !snapshot.context.locked } });
    expect(result.violations).toEqual([]);
    expect(result.stateValues).toEqual(['"closed"', '"opened"']);
  });
});
