import { getAdjacencyMap } from 'xstate/graph';
import { transition, type AnyStateMachine, type EventFromLogic, type InputFrom, type SnapshotFrom } from 'xstate';

/** One edge of the state graph, with the actions the transition would execute (nothing is executed). */
export interface ModelStep<TMachine extends AnyStateMachine> {
  from: SnapshotFrom<TMachine>;
  event: EventFromLogic<TMachine>;
  to: SnapshotFrom<TMachine>;
  actions: ReadonlyArray<{ type: string; params?: unknown }>;
}

/** An invariant that failed, with the shortest event path from the initial state that reaches the offending state. */
export interface ModelViolation {
  invariant: string;
  path: string[];
  event?: string;
  state: unknown;
}

export interface ModelCheckOptions<TMachine extends AnyStateMachine> {
  machine: TMachine;
  input?: InputFrom<TMachine>;
  /** The events to try in each state: include adversarial ones (duplicates, unknown ids, stale replies). */
  events: (snapshot: SnapshotFrom<TMachine>) => ReadonlyArray<EventFromLogic<TMachine>>;
  /** State identity for the traversal (default: value plus context as JSON). */
  serializeState?: (snapshot: SnapshotFrom<TMachine>) => string;
  /** Checked on every reachable state; return false (or a message) to report a violation. */
  stateInvariants?: Record<string, (snapshot: SnapshotFrom<TMachine>) => boolean | string>;
  /** Checked on every edge of the reachable graph. */
  transitionInvariants?: Record<string, (step: ModelStep<TMachine>) => boolean | string>;
  /** Stop after this many states (a guard against unbounded context). */
  limit?: number;
}

export interface ModelCheckResult {
  states: number;
  transitions: number;
  /** Distinct state values reached, as JSON. */
  stateValues: string[];
  violations: ModelViolation[];
}

const defaultSerialize = (snapshot: { value: unknown; context: unknown; status?: string }): string =>
  JSON.stringify({ value: snapshot.value, context: snapshot.context, status: snapshot.status });

const eventName = (event: { type: string }): string => {
  const details = Object.entries(event).filter(([key]) => key !== 'type');
  return details.length === 0 ? event.type : `${event.type} ${JSON.stringify(Object.fromEntries(details))}`;
};

type Actions = ReadonlyArray<{ type: string; params?: unknown }>;

/**
 * The machine as `xstate/graph` should see it: every transition runs in a fresh actor system (through xstate's pure
 * `transition`), so exploring two branches that spawn a child with the same `systemId` does not collide. xstate builds
 * that system's inert actor by computing the machine's initial snapshot without input; the check's input is given to
 * it, so a context factory that reads its input does not throw (an exception per edge was a quarter of the check's
 * time). Each edge's actions are kept (by source snapshot and event object) for the transition invariants, so no
 * edge is computed twice.
 */
const exploredMachine = <TMachine extends AnyStateMachine>(machine: TMachine, input: unknown, actionsOf: WeakMap<object, Map<unknown, Actions>>): TMachine => {
  const withInput = new Proxy(machine, {
    get(target, property, receiver) {
      if (property === 'getInitialSnapshot') return (scope: unknown, given: unknown) => (target.getInitialSnapshot as (scope: unknown, input: unknown) => unknown)(scope, given ?? input);
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return new Proxy(withInput, {
    get(target, property, receiver) {
      if (property === 'transition')
        return (snapshot: SnapshotFrom<TMachine>, event: EventFromLogic<TMachine>) => {
          const [next, actions] = transition(withInput, snapshot, event);
          let edges = actionsOf.get(snapshot as object);
          if (!edges) actionsOf.set(snapshot as object, (edges = new Map()));
          edges.set(event, actions as Actions);
          return next;
        };
      return Reflect.get(target, property, receiver);
    },
  });
};

type Adjacency<TMachine extends AnyStateMachine> = Record<string, { state: SnapshotFrom<TMachine>; transitions: Record<string, { event: EventFromLogic<TMachine>; state: SnapshotFrom<TMachine> }> }>;

/** Shortest event paths from the initial state to every state, by breadth-first search over the adjacency map. */
const shortestPaths = <TMachine extends AnyStateMachine>(adjacency: Adjacency<TMachine>, serialize: (snapshot: SnapshotFrom<TMachine>) => string): Map<string, string[]> => {
  const [initial] = Object.keys(adjacency);
  const paths = new Map<string, string[]>();
  if (initial === undefined) return paths;
  paths.set(initial, []);
  const queue = [initial];
  for (let index = 0; index < queue.length; index++) {
    const key = queue[index]!;
    const path = paths.get(key)!;
    for (const edge of Object.values(adjacency[key]!.transitions)) {
      const next = serialize(edge.state);
      if (paths.has(next)) continue;
      paths.set(next, [...path, eventName(edge.event as { type: string })]);
      queue.push(next);
    }
  }
  return paths;
};

/**
 * Model-check a statechart: enumerate every state reachable under `events` with `xstate/graph`, check the state
 * invariants on each one and the transition invariants on every edge, and report each violation with the shortest
 * path that reaches it. Pure: no actor is started and no action runs.
 */
export const checkMachine = <TMachine extends AnyStateMachine>(options: ModelCheckOptions<TMachine>): ModelCheckResult => {
  const serializeState = (options.serializeState ?? defaultSerialize) as (snapshot: SnapshotFrom<TMachine>) => string;
  const traversal = {
    events: options.events,
    serializeState: (snapshot: SnapshotFrom<TMachine>) => serializeState(snapshot),
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
  } as never;
  const actionsOf = new WeakMap<object, Map<unknown, Actions>>();
  const machine = exploredMachine(options.machine, options.input, actionsOf);
  const adjacency = getAdjacencyMap(machine, traversal) as Record<string, { state: SnapshotFrom<TMachine>; transitions: Record<string, { event: EventFromLogic<TMachine>; state: SnapshotFrom<TMachine> }> }>;
  const paths = shortestPaths(adjacency, serializeState);
  const violations: ModelViolation[] = [];
  const values = new Set<string>();
  let transitions = 0;
  // The event's name is built only for a violation: building it for every edge and invariant was a tenth of the time.
  const report = (invariant: string, outcome: boolean | string, key: string, state: unknown, event?: { type: string }) => {
    if (outcome === true) return;
    violations.push({ invariant: typeof outcome === 'string' ? `${invariant}: ${outcome}` : invariant, path: paths.get(key) ?? [], state, ...(event ? { event: eventName(event) } : {}) });
  };
  for (const [key, node] of Object.entries(adjacency)) {
    values.add(JSON.stringify((node.state as { value: unknown }).value));
    for (const [name, invariant] of Object.entries(options.stateInvariants ?? {})) report(name, invariant(node.state), key, (node.state as { value: unknown }).value);
    for (const edge of Object.values(node.transitions)) {
      transitions++;
      if (!options.transitionInvariants) continue;
      const known = actionsOf.get(node.state as object)?.get(edge.event);
      const [to, actions] = known ? [edge.state, known] : transition(machine, node.state, edge.event);
      const step: ModelStep<TMachine> = { from: node.state, event: edge.event, to: to as SnapshotFrom<TMachine>, actions: actions as ModelStep<TMachine>['actions'] };
      for (const [name, invariant] of Object.entries(options.transitionInvariants)) report(name, invariant(step), key, (node.state as { value: unknown }).value, edge.event as { type: string });
    }
  }
  return { states: Object.keys(adjacency).length, transitions, stateValues: [...values].sort(), violations };
};
