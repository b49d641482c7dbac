/*
 * Stand-in child logic for the host's interpreter (pure-tree.ts). xstate's `spawnChild` still allocates an actor ref
 * to name a child in its parent's `children` (its resolve step cannot be skipped): the machines run there with their
 * children's logic replaced by a stand-in whose ref is created but never started, and the stand-in remembers the real
 * logic, which the interpreter drives. Split from pure-tree.ts (issue 31).
 */
import type { AnyActorLogic, AnyActorRef, AnyStateMachine } from 'xstate';

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
