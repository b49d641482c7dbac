import { describe, expect, it } from 'vitest';
import { assign, createMachine, setup } from 'xstate';
import { getAdjacencyMap } from 'xstate/graph';
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

  it('reaches the states and edges xstate/graph reaches', () => {
    const events = () => [{ type: 'lock' as const }, { type: 'unlock' as const }, { type: 'open' as const }, { type: 'close' as const }, { type: 'open' as const }];
    const serializeState = (snapshot: { value: unknown; context: unknown }) => JSON.stringify([snapshot.value, snapshot.context]);
    const result = checkMachine({ machine: door, events, serializeState });
    const adjacency = getAdjacencyMap(door, { events, serializeState } as never) as unknown as Record<string, { transitions: Record<string, unknown> }>;
    expect(result.states).toBe(Object.keys(adjacency).length);
    // An event listed twice (as equal JSON) is one edge, as in xstate/graph.
    expect(result.transitions).toBe(Object.values(adjacency).reduce((sum, node) => sum + Object.keys(node.transitions).length, 0));
  });

  it('gives each edge its own actor system: two branches may spawn a child with the same system id', () => {
    const child = createMachine({ initial: 'on', states: { on: {} } });
    const parent = setup({ actors: { child }, types: { context: {} as { n: number }, events: {} as { type: 'spawn' } | { type: 'bump' } } }).createMachine({
      context: { n: 0 },
      initial: 'idle',
      states: {
        idle: { on: { bump: { guard: ({ context }) => context.n < 2, actions: assign({ n: ({ context }) => context.n + 1 }) }, spawn: 'holding' } },
        holding: { invoke: { src: 'child', id: 'c', systemId: 'the-child' } },
      },
    });
    const result = checkMachine({ machine: parent, events: () => [{ type: 'bump' as const }, { type: 'spawn' as const }], transitionInvariants: { 'entering holding starts the child': ({ to }) => !to.matches('holding') || 'c' in to.children } });
    expect(result.violations).toEqual([]);
    expect(result.states).toBe(6);
  });
});
