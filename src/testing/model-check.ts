import { createActor, initialTransition, type ActorScope, type AnyStateMachine, type EventFromLogic, type InputFrom, type SnapshotFrom } from 'xstate';

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
  /** The most states to explore: the check throws when more are reachable (a guard against unbounded context). */
  limit?: number;
}

export interface ModelCheckResult {
  states: number;
  /** Edges explored: one per state and event the event generator yields there (an event repeated as equal JSON counts once). */
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
type Scope = ActorScope<never, never>;

/**
 * xstate's pure `transition(machine, snapshot, event)`, minus its cost: xstate builds a fresh inert actor for every
 * call, and constructing that actor computes the machine's initial snapshot (its context factory, its initial
 * children spawned) only to throw it away — a third of a model check's time. Here the throwaway actor's logic hands
 * back the initial snapshot computed once; every call still gets its own actor system, so two branches that spawn a
 * child with the same `systemId` do not collide, and the transition itself is the machine's own, with its actions
 * collected, not executed.
 */
const pureStepper = <TMachine extends AnyStateMachine>(machine: TMachine, initial: SnapshotFrom<TMachine>) => {
  const throwaway = Object.create(machine) as AnyStateMachine;
  Object.defineProperty(throwaway, 'getInitialSnapshot', { value: () => initial });
  return (snapshot: SnapshotFrom<TMachine>, event: EventFromLogic<TMachine>): [SnapshotFrom<TMachine>, Actions] => {
    const self = createActor(throwaway);
    const actions: Array<{ type: string; params?: unknown }> = [];
    const scope = {
      self,
      defer: () => {},
      id: '',
      logger: () => {},
      sessionId: '',
      stopChild: () => {},
      system: self.system,
      emit: () => {},
      actionExecutor: (action: { type: string; params?: unknown }) => {
        actions.push(action);
      },
    } as unknown as Scope;
    return [machine.transition(snapshot, event, scope as never) as SnapshotFrom<TMachine>, actions];
  };
};

/** A discovered state: the edge it was first reached by (for its shortest path), and its snapshot until it is expanded. */
interface Visit<TMachine extends AnyStateMachine> {
  snapshot: SnapshotFrom<TMachine> | undefined;
  parent: number;
  event: { type: string } | undefined;
}

/**
 * Model-check a statechart: enumerate every state reachable under `events` breadth-first (each edge computed with the
 * machine's pure transition, as `xstate/graph` does), check the state invariants on each one and the transition
 * invariants on every edge, and report each violation with the shortest path that reaches it. Pure: no actor is
 * started and no action runs. Each state is serialized once, each edge computed once.
 */
export const checkMachine = <TMachine extends AnyStateMachine>(options: ModelCheckOptions<TMachine>): ModelCheckResult => {
  const serializeState = (options.serializeState ?? defaultSerialize) as (snapshot: SnapshotFrom<TMachine>) => string;
  const machine = options.machine;
  const [initial] = initialTransition(machine, options.input as never) as [SnapshotFrom<TMachine>, unknown];
  const step = pureStepper(machine, initial);
  const limit = options.limit ?? Infinity;
  const stateInvariants = Object.entries(options.stateInvariants ?? {});
  const transitionInvariants = Object.entries(options.transitionInvariants ?? {});

  // Breadth-first, with a read index instead of shifting the queue: `visits` is the queue and the path tree at once.
  const indexOf = new Map<string, number>([[serializeState(initial), 0]]);
  const visits: Visit<TMachine>[] = [{ snapshot: initial, parent: -1, event: undefined }];
  const pathOf = (index: number): string[] => {
    const path: string[] = [];
    for (let at = visits[index]!; at.event !== undefined; at = visits[at.parent]!) path.push(eventName(at.event));
    return path.reverse();
  };
  const violations: ModelViolation[] = [];
  // The event's name and the path are built only for a violation.
  const report = (invariant: string, outcome: boolean | string, index: number, state: unknown, event?: { type: string }) => {
    if (outcome === true) return;
    violations.push({ invariant: typeof outcome === 'string' ? `${invariant}: ${outcome}` : invariant, path: pathOf(index), state, ...(event ? { event: eventName(event) } : {}) });
  };
  const values = new Set<string>();
  let transitions = 0;
  for (let index = 0; index < visits.length; index++) {
    const visit = visits[index]!;
    const from = visit.snapshot!;
    visit.snapshot = undefined;
    const value = (from as { value: unknown }).value;
    values.add(JSON.stringify(value));
    for (const [name, invariant] of stateInvariants) report(name, invariant(from), index, value);
    const events = options.events(from);
    // xstate/graph keys a state's edges by the event's JSON: an event listed twice is one edge.
    const seen = events.length > 1 ? new Set<string>() : undefined;
    for (const event of events) {
      if (seen) {
        const key = JSON.stringify(event);
        if (seen.has(key)) continue;
        seen.add(key);
      }
      const [to, actions] = step(from, event);
      transitions++;
      const key = serializeState(to);
      if (!indexOf.has(key)) {
        if (visits.length >= limit) throw new Error(`Traversal limit exceeded: more than ${limit} states are reachable`);
        indexOf.set(key, visits.length);
        visits.push({ snapshot: to, parent: index, event: event as { type: string } });
      }
      if (transitionInvariants.length === 0) continue;
      const edge: ModelStep<TMachine> = { from, event, to, actions };
      for (const [name, invariant] of transitionInvariants) report(name, invariant(edge), index, value, event as { type: string });
    }
  }
  return { states: visits.length, transitions, stateValues: [...values].sort(), violations };
};
