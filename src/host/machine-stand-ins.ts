/*
 * Stand-in child logic for the host's interpreter (pure-tree.ts). xstate's `spawnChild` still allocates an actor ref
 * to name a child in its parent's `children` (its resolve step cannot be skipped): the machines run there with their
 * children's logic replaced by a stand-in whose ref is created but never started, and the stand-in remembers the real
 * logic, which the interpreter drives. Split from pure-tree.ts (issue 31).
 */
import { Actor, type AnyActorLogic, type AnyActorRef, type AnyStateMachine } from 'xstate';

/** The stand-in logic's marker: the real logic a stand-in ref names. */
const realLogicOf = Symbol('rein.realLogic');

type StandIn = AnyActorLogic & { [realLogicOf]: AnyStateMachine };

const standIns = new WeakMap<AnyStateMachine, StandIn>();

/** A logic whose actor is a name and nothing more: created by `spawnChild`, never started (the interpreter runs the real one). */
export const standInFor = (real: AnyStateMachine): StandIn => {
  let standIn = standIns.get(real);
  if (!standIn) {
    standIn = {
      [realLogicOf]: real,
      config: undefined,
      transition: (snapshot: unknown) => snapshot,
      getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
      // A restored child's persisted snapshot is kept as it is: the interpreter restores it with the real logic.
      restoreSnapshot: (snapshot: unknown) => snapshot,
      getPersistedSnapshot: (snapshot: unknown) => snapshot,
    } as unknown as StandIn;
    standIns.set(real, standIn);
  }
  return standIn;
};

const interpreted = new WeakMap<AnyStateMachine, AnyStateMachine>();

/**
 * The machine as this interpreter runs it: the same definition (states, transitions, guards, actions), with each child
 * logic it references replaced by a stand-in for it. Made once per machine.
 */
export const interpretedOf = (real: AnyStateMachine): AnyStateMachine => {
  let machine = interpreted.get(real);
  if (!machine) {
    const actors = (real.implementations.actors ?? {}) as Record<string, unknown>;
    const provided: Record<string, StandIn> = {};
    for (const src of Object.keys(actors)) {
      const logic = actors[src];
      if (logic && typeof (logic as AnyStateMachine).transition === 'function' && 'root' in (logic as object)) provided[src] = standInFor(logic as AnyStateMachine);
    }
    machine = real.provide({ actors: provided } as never) as AnyStateMachine;
    interpreted.set(real, machine);
  }
  return machine;
};

/** The real logic a child ref stands for (the child's machine definition). */
export const definitionOf = (ref: AnyActorRef): AnyStateMachine | undefined => ((ref as unknown as { logic?: Partial<StandIn> }).logic ?? {})[realLogicOf];

/**
 * The ref a stand-in child gets when a compiled machine (compiled-machine.ts) spawns it: an xstate `Actor` in everything
 * its parent's snapshot, the persisted snapshot and the interpreter read (id, src, system id, sync flag, logic, parent,
 * session id from the system, registered under its system id at once), without the constructor's mailbox, observers
 * and scope, which a ref that is never started does not use. Undefined for a logic that is not a stand-in.
 */
export const standInRefOf = (
  logic: unknown,
  options: { id: string | undefined; src: unknown; parent: AnyActorRef; syncSnapshot: boolean | undefined; systemId: string | undefined },
): AnyActorRef | undefined => {
  if (typeof logic !== 'object' || logic === null || !(realLogicOf in logic)) return undefined;
  const system = (options.parent as unknown as { system: { _bookId(): string; _set(systemId: string, ref: unknown): void } }).system;
  const ref = Object.create(Actor.prototype) as Record<string, unknown>;
  ref.logic = logic;
  ref._snapshot = undefined;
  ref.observers = new Set();
  ref.eventListeners = new Map();
  ref._processingStatus = 0;
  ref._parent = options.parent;
  ref._syncSnapshot = options.syncSnapshot;
  ref.ref = ref;
  ref.systemId = undefined;
  ref.system = system;
  ref._deferred = [];
  ref.sessionId = system._bookId();
  ref.id = options.id ?? ref.sessionId;
  ref.src = options.src ?? logic;
  ref.options = options;
  if (options.systemId) {
    ref.systemId = options.systemId;
    system._set(options.systemId, ref);
  }
  ref._snapshot = (logic as StandIn).getInitialSnapshot(undefined as never, undefined);
  return ref as unknown as AnyActorRef;
};
