import { createActor, raise, sendTo, spawnChild, stopChild, type ActorScope, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { ReinError } from './host-errors.js';
import { MachineStructure, namesAnActor, Refusal, resolveOutput, wildcard, type Action, type GuardArgs, type Leaf, type Transition } from './compiled-structure.js';
import { standInRefOf } from './machine-stand-ins.js';

/*
 * The compiled form of a machine definition (issue 26, decision 2): the same `StateNode`s xstate built from the
 * definition in machines/*.machine.ts, walked once at first use into per-state, per-event candidate lists (xstate's
 * priority order: the active leaf first, then its ancestors; an exact descriptor before wildcards, longer wildcards
 * first), guards and actions resolved to their implementation functions, and each transition's exit and entry sets
 * computed once per source leaf. `transition` and `getInitialSnapshot` then run xstate's macrostep algorithm
 * (https://www.w3.org/TR/scxml/ as xstate 5 implements it: the event's transition, eventless transitions, the internal
 * queue, final states and the machine's output, children stopped when it ends) without a snapshot copy per action:
 * one snapshot per macrostep, shaped as xstate's own, holding the same value, context, status, output and children.
 * The actor scope's executor receives the same actions with the same params, in the same order, as under xstate —
 * which is what the host records from (pure-tree.ts).
 *
 * What the compiler does not implement is refused when the machine is compiled (`compileRefusalOf` names it), and the
 * host runs that machine through xstate: parallel and history states, invoked actors, delayed transitions, exit
 * actions, `stateIn` guards, and builtin actions other than assign, enqueueActions, spawnChild, stopChild, sendTo and
 * raise. xstate itself still runs the same definitions for `--inspect`, `rein graph`, the model checks, and as the
 * oracle of tests/host/compiled-machine.prop.test.ts.
 */

/** The mutable state of one macrostep (one snapshot is made from it at its end). */
interface Run {
  context: any;
  children: Record<string, AnyActorRef>;
  leaf: Leaf;
  status: string;
  output: unknown;
  error: unknown;
  historyValue: unknown;
  /** How many snapshot copies xstate would have made so far (an assign, a spawn, a stop, a new configuration, an end). */
  version: number;
  /** `children` may be changed in place: this run copied it, or the caller gave up the snapshot it came from (see `transition`). */
  ownsChildren: boolean;
  queue: EventObject[];
  scope: ActorScope<any, EventObject>;
}

/** The children maps compiled machines made (a copy, or an initial map): only these are changed in place. */
const ownedChildren = new WeakSet<object>();

/**
 * The children map of a snapshot without children: one frozen empty map, shared (most actors never spawn: a turn's
 * initial snapshot took a map and a WeakSet entry each). Not owned, so a first spawn copies it (`ownChildren`).
 */
const noChildren: Record<string, AnyActorRef> = Object.freeze({}) as Record<string, AnyActorRef>;

const specialParent = '#_parent';
const specialInternal = '#_internal';

// xstate's own execute functions for its builtins: what its actions hand the executor as `exec`.
const executeSpawn = (spawnChild('x') as unknown as { execute: (...args: unknown[]) => void }).execute;
const executeStop = (stopChild('x') as unknown as { execute: (...args: unknown[]) => void }).execute;
const executeSendTo = (sendTo('x', { type: 'x' }) as unknown as { execute: (...args: unknown[]) => void }).execute;
const executeRaise = (raise({ type: 'x' }) as unknown as { execute: (...args: unknown[]) => void }).execute;

/** The error xstate raises when a guard throws, word for word: which guard, on which event, in which state node. */
const guardFailed = (candidate: Transition, event: EventObject, nodeId: string, error: unknown): Error =>
  new Error(`Unable to evaluate guard ${candidate.guardLabel ? `'${candidate.guardLabel}' ` : ''}in transition for event '${event.type}' in state node '${nodeId}':\n${(error as Error).message}`);

/** A machine compiled (see the file comment): `transition` and `getInitialSnapshot` with xstate's signatures and results. */
export class CompiledMachine extends MachineStructure {
  private readonly methods: Record<'matches' | 'hasTag' | 'can' | 'getMeta' | 'toJSON', unknown>;
  private enqueued: Action[] = [];
  private readonly enqueue: any;

  constructor(machine: AnyStateMachine) {
    super(machine);
    // The snapshot methods are xstate's own (taken from a snapshot it made): a compiled snapshot has the same shape.
    const sample = machine.resolveState({ value: this.initialLeaf.value as never, context: {} as never }) as unknown as Record<string, unknown>;
    this.methods = { matches: sample.matches, hasTag: sample.hasTag, can: sample.can, getMeta: sample.getMeta, toJSON: sample.toJSON };
    const self = this;
    const enqueue = (action: unknown) => void self.enqueued.push(self.runtimeAction(action));
    enqueue.assign = (assignment: unknown) => void self.enqueued.push({ kind: 'assign', assignment, params: undefined } satisfies Action);
    enqueue.sendTo = (to: unknown, event: unknown, options?: { id?: unknown; delay?: unknown }) =>
      void self.enqueued.push({ kind: 'sendTo', to, event, id: options?.id, delay: options?.delay, params: undefined } satisfies Action);
    enqueue.spawnChild = (src: unknown, options: { id?: unknown; systemId?: string; input?: unknown; syncSnapshot?: boolean } = {}) =>
      void self.enqueued.push({ kind: 'spawn', src, id: options.id, systemId: options.systemId, input: options.input, syncSnapshot: options.syncSnapshot ?? false, params: undefined } satisfies Action);
    enqueue.stopChild = (actorRef: unknown) => void self.enqueued.push({ kind: 'stop', actorRef, params: undefined } satisfies Action);
    enqueue.raise = (event: unknown, options?: { id?: unknown; delay?: unknown }) =>
      void self.enqueued.push({ kind: 'raise', event, id: options?.id, delay: options?.delay, params: undefined } satisfies Action);
    for (const name of ['cancel', 'emit', 'sendParent'] as const) {
      (enqueue as unknown as Record<string, unknown>)[name] = () => {
        throw new ReinError('MACHINE_ERROR', `the compiled machine '${machine.id}' does not implement enqueue.${name}`);
      };
    }
    this.enqueue = enqueue;
  }

  /** xstate's `getInitialSnapshot`: the context from the input, the initial configuration entered, then a macrostep. */
  getInitialSnapshot(scope: ActorScope<any, EventObject>, input: unknown): AnyMachineSnapshot {
    const initEvent = { type: 'xstate.init', input } as EventObject;
    const contextConfig = this.machine.config.context;
    const run: Run = {
      context: typeof contextConfig !== 'function' && contextConfig ? contextConfig : {},
      children: noChildren,
      leaf: this.preInitial,
      status: 'active',
      output: undefined,
      error: undefined,
      historyValue: {},
      version: 0,
      ownsChildren: false,
      queue: [],
      scope,
    };
    let preInitialContext = run.context;
    try {
      if (typeof contextConfig === 'function') {
        const made = contextConfig({ spawn: this.noSpawn, input, self: scope.self });
        run.context = { ...run.context, ...made };
        preInitialContext = run.context;
      }
      this.microstep(run, this.initialTransition, initEvent);
      this.macrostep(run, initEvent, true);
      return this.snapshotOf(run);
    } catch (error) {
      return this.snapshotOf({ ...run, context: preInitialContext, children: {}, leaf: this.preInitial, status: 'error', output: undefined, error });
    }
  }

  /**
   * xstate's `transition` (its macrostep): the snapshot after `event` and everything it set off inside this actor.
   * `consumed`: the caller drops `snapshot` for the result (the interpreted tree does), so a children map this compiled
   * machine made may be changed in place — a spawn or a stop then costs O(1), not a copy of every other child (a
   * delegation's thousand children stopped one by one were O(n²)). Otherwise it is copied once per macrostep.
   */
  transition(snapshot: AnyMachineSnapshot, event: EventObject, scope: ActorScope<any, EventObject>, consumed = false): AnyMachineSnapshot {
    if (event.type === wildcard) throw new Error(`An event cannot have the wildcard type ('${wildcard}')`);
    const run: Run = {
      context: snapshot.context,
      children: snapshot.children as Record<string, AnyActorRef>,
      leaf: this.configurationOf(snapshot),
      status: snapshot.status,
      output: snapshot.output,
      error: snapshot.error,
      historyValue: snapshot.historyValue,
      version: 0,
      ownsChildren: consumed && ownedChildren.has(snapshot.children),
      queue: [],
      scope,
    };
    this.macrostep(run, event, false);
    return run.version === 0 ? snapshot : this.snapshotOf(run);
  }

  private macrostep(run: Run, event: EventObject, initial: boolean): void {
    if (event.type === 'xstate.stop') {
      this.stopChildren(run, event, true);
      run.status = 'stopped';
      run.version++;
      return;
    }
    let nextEvent = event;
    if (!initial && event.type !== 'xstate.init') {
      const selected = this.select(run.leaf, event, run.context);
      if (!selected && event.type.startsWith('xstate.error.actor')) {
        this.stopChildren(run, event, true);
        run.status = 'error';
        run.error = (event as { error?: unknown }).error;
        run.version++;
        return;
      }
      if (selected) this.microstep(run, selected, event);
    }
    let selectEventless = true;
    while (run.status === 'active') {
      // A configuration without eventless transitions (most of them) is not searched.
      let selected: Transition | undefined = selectEventless && (run.leaf.always ?? this.eventlessOf(run.leaf)).length > 0 ? this.selectEventless(run.leaf, run.context, nextEvent) : undefined;
      const eventless: boolean = selected !== undefined;
      if (!selected) {
        if (run.queue.length === 0) break;
        nextEvent = run.queue.shift()!;
        selected = this.select(run.leaf, nextEvent, run.context);
        if (!selected) {
          selectEventless = true;
          continue;
        }
      }
      const before = run.version;
      this.microstep(run, selected, nextEvent);
      selectEventless = !eventless || run.version !== before;
    }
    if (run.status !== 'active') this.stopChildren(run, nextEvent, false);
  }

  /** The transition an event takes: the first enabled candidate of the leaf, else of its parent, and so on. */
  private select(leaf: Leaf, event: EventObject, context: unknown): Transition | undefined {
    const found = leaf.byType?.get(event.type) ?? (namesAnActor(event.type) ? undefined : this.leafCandidatesOf(leaf, event.type));
    if (found === undefined) return this.selectByNode(leaf, event, context);
    const { transitions, sources } = found;
    let args: GuardArgs | undefined;
    for (let index = 0; index < transitions.length; index++) {
      const candidate = transitions[index]!;
      if (!candidate.guard) return candidate;
      let passed: boolean;
      try {
        passed = candidate.guard((args ??= { context, event }), undefined);
      } catch (error) {
        throw guardFailed(candidate, event, sources[index]!.id, error);
      }
      if (passed) return candidate;
    }
    return undefined;
  }

  /** `select` for a type that names an actor (never kept per leaf): node by node, the leaf's first, stopping at the first enabled. */
  private selectByNode(leaf: Leaf, event: EventObject, context: unknown): Transition | undefined {
    const nodes = leaf.nodes;
    let args: GuardArgs | undefined;
    for (let index = nodes.length - 1; index >= 0; index--) {
      const node = nodes[index]!;
      for (const candidate of this.candidatesOf(node, event.type)) {
        if (!candidate.guard) return candidate;
        let passed: boolean;
        try {
          passed = candidate.guard((args ??= { context, event }), undefined);
        } catch (error) {
          throw guardFailed(candidate, event, node.id, error);
        }
        if (passed) return candidate;
      }
    }
    return undefined;
  }

  private selectEventless(leaf: Leaf, context: unknown, event: EventObject): Transition | undefined {
    const candidates = leaf.always ?? this.eventlessOf(leaf);
    let args: GuardArgs | undefined;
    for (let index = 0; index < candidates.length; index++) {
      const candidate = candidates[index]!;
      if (!candidate.guard || candidate.guard((args ??= { context, event }), undefined)) return candidate;
    }
    return undefined;
  }

  /** xstate's microstep for one transition: its actions, then each entered state's, a final state ending the machine. */
  private microstep(run: Run, transition: Transition, event: EventObject): void {
    const plan = transition.plans.get(run.leaf) ?? this.planOf(transition, run.leaf);
    const own = transition.actions;
    for (let index = 0; index < own.length; index++) this.runAction(run, own[index]!, event);
    const root = this.machine.root;
    const entered = plan.entered;
    for (let step = 0; step < entered.length; step++) {
      const { node, actions } = entered[step]!;
      for (let index = 0; index < actions.length; index++) this.runAction(run, actions[index]!, event);
      if (node.type !== 'final') continue;
      const parent = node.parent;
      const ancestorMarker = parent?.parent;
      if (parent?.type === 'compound') {
        run.queue.push({ type: `xstate.done.state.${parent.id}`, output: node.output !== undefined ? resolveOutput(node.output, run.context, event, run.scope.self) : undefined } as EventObject);
      }
      if (ancestorMarker) continue;
      const completion = node;
      let output: unknown;
      if (root.output !== undefined) {
        const doneStateEvent = { type: `xstate.done.state.${completion.id}`, output: completion.output !== undefined && completion.parent ? resolveOutput(completion.output, run.context, event, run.scope.self) : undefined };
        output = resolveOutput(root.output, run.context, doneStateEvent, run.scope.self);
      }
      run.status = 'done';
      run.output = output;
      run.version++;
    }
    if (plan.leaf !== run.leaf) {
      run.leaf = plan.leaf;
      run.version++;
    }
  }

  /** xstate's `stopChildren`: a stop for every child (`removing`: and its ref leaves the snapshot's children). */
  private stopChildren(run: Run, event: EventObject, removing: boolean): void {
    const children = run.children;
    const version = run.version;
    const owned = run.ownsChildren;
    // Kept (`!removing`): the stops below must not empty the map the snapshot keeps.
    if (!removing) run.ownsChildren = false;
    for (const child of Object.values(children)) this.runAction(run, { kind: 'stop', actorRef: child, params: undefined }, event);
    if (!removing) {
      run.children = children;
      run.version = version;
      run.ownsChildren = owned;
    }
  }

  /** One action, as xstate's `resolveAndExecuteActionsWithContext` resolves and hands it to the executor. */
  private runAction(run: Run, action: Action, event: EventObject): void {
    const scope = run.scope;
    const params = typeof action.params === 'function' ? action.params({ context: run.context, event }) : action.params;
    if (action.kind === 'custom') {
      scope.actionExecutor({ type: action.type, info: { context: run.context, event, self: scope.self, system: scope.system }, params, exec: action.exec } as never);
      return;
    }
    if (action.kind === 'assign') {
      if (!run.context) throw new Error('Cannot assign to undefined `context`. Ensure that `context` is defined in the machine config.');
      const assignArgs = { context: run.context, event, spawn: this.noSpawn, self: scope.self, system: scope.system };
      const assignment = action.assignment;
      let update: Record<string, unknown>;
      if (typeof assignment === 'function') update = assignment(assignArgs, params);
      else {
        update = {};
        for (const key of Object.keys(assignment as object)) {
          const part = (assignment as Record<string, unknown>)[key];
          update[key] = typeof part === 'function' ? part(assignArgs, params) : part;
        }
      }
      // A spread, not Object.assign({}, …): an update overrides keys the context has, and V8 clones the context's shape
      // (~0.2 µs for a session context, against ~0.8 µs; Node 20). The same keys in the same order.
      run.context = { ...run.context, ...update };
      run.version++;
      return;
    }
    const args = { context: run.context, event, self: scope.self, system: scope.system };
    switch (action.kind) {
      case 'enqueue': {
        this.enqueued = [];
        action.collect({ context: args.context, event, enqueue: this.enqueue, check: (guard: unknown) => this.compileGuard(guard)({ context: run.context, event }, undefined), self: scope.self, system: scope.system }, params);
        const collected = this.enqueued;
        this.enqueued = [];
        for (const each of collected) this.runAction(run, each, event);
        return;
      }
      case 'spawn': {
        const src = action.src;
        const logic = typeof src === 'string' ? (this.machine.implementations.actors as Record<string, unknown>)[src] : src;
        const id = typeof action.id === 'function' ? action.id(args) : action.id;
        let actorRef: AnyActorRef | undefined;
        let input: unknown;
        if (logic) {
          input = typeof action.input === 'function' ? action.input({ context: run.context, event, self: scope.self }) : action.input;
          const options = { id: id as string | undefined, src, parent: scope.self, syncSnapshot: action.syncSnapshot, systemId: action.systemId, input };
          // A stand-in child (the host's interpreter drives its real logic) gets a light ref; anything else xstate's actor.
          actorRef = standInRefOf(logic, options) ?? (createActor(logic as never, options as never) as unknown as AnyActorRef);
        } else {
          console.warn(`Actor type '${String(src)}' not found in machine '${scope.id}'.`);
        }
        this.ownChildren(run)[id as string] = actorRef!;
        run.version++;
        const resolved = { id: action.id, systemId: action.systemId, actorRef, src, input };
        scope.actionExecutor({ type: 'xstate.spawnChild', info: args, params: resolved, exec: executeSpawn.bind(null, scope, resolved) } as never);
        return;
      }
      case 'stop': {
        const refOrId = typeof action.actorRef === 'function' ? action.actorRef(args, params) : action.actorRef;
        const ref = (typeof refOrId === 'string' ? run.children[refOrId] : refOrId) as AnyActorRef | undefined;
        if (ref && Object.hasOwn(run.children, ref.id)) delete this.ownChildren(run)[ref.id];
        run.version++;
        scope.actionExecutor({ type: 'xstate.stopChild', info: args, params: ref, exec: executeStop.bind(null, scope, ref) } as never);
        return;
      }
      case 'sendTo': {
        if (typeof action.event === 'string') throw new Error(`Only event objects may be used with sendTo; use sendTo({ type: "${action.event}" }) instead`);
        const resolvedEvent = typeof action.event === 'function' ? action.event(args, params) : action.event;
        const delay = this.delayOf(action.delay, args, params);
        const target = typeof action.to === 'function' ? action.to(args, params) : action.to;
        let to: unknown;
        if (typeof target === 'string') {
          if (target === specialParent) to = (scope.self as unknown as { _parent: unknown })._parent;
          else if (target === specialInternal) to = scope.self;
          else if (target.startsWith('#_')) to = run.children[target.slice(2)];
          // (xstate's `deferredActorIds` are the ids of invoked actors: the compiler refuses invokes.)
          else to = run.children[target];
          if (!to) throw new Error(`Unable to send event to actor '${target}' from machine '${this.machine.id}'.`);
        } else {
          to = target || scope.self;
        }
        const resolved = { to, targetId: typeof target === 'string' ? target : undefined, event: resolvedEvent, id: action.id, delay };
        scope.actionExecutor({ type: 'xstate.sendTo', info: args, params: resolved, exec: executeSendTo.bind(null, scope, resolved) } as never);
        return;
      }
      case 'raise': {
        if (typeof action.event === 'string') throw new Error(`Only event objects may be used with raise; use raise({ type: "${action.event}" }) instead`);
        const resolvedEvent = typeof action.event === 'function' ? action.event(args, params) : action.event;
        const delay = this.delayOf(action.delay, args, params);
        if (typeof delay !== 'number') run.queue.push(resolvedEvent as EventObject);
        const resolved = { event: resolvedEvent, id: action.id, delay };
        scope.actionExecutor({ type: 'xstate.raise', info: args, params: resolved, exec: executeRaise.bind(null, scope, resolved) } as never);
        return;
      }
    }
  }

  private delayOf(delay: unknown, args: unknown, params: unknown): unknown {
    if (typeof delay === 'string') {
      const configured = (this.machine.implementations.delays as Record<string, unknown> | undefined)?.[delay];
      return typeof configured === 'function' ? configured(args, params) : configured;
    }
    return typeof delay === 'function' ? delay(args, params) : delay;
  }

  /** The run's children map, copied first unless the run owns it (once per macrostep at most). */
  private ownChildren(run: Run): Record<string, AnyActorRef> {
    if (!run.ownsChildren) {
      run.children = { ...run.children };
      ownedChildren.add(run.children);
      run.ownsChildren = true;
    }
    return run.children;
  }

  private readonly noSpawn = () => {
    throw new ReinError('MACHINE_ERROR', `the compiled machine '${this.machine.id}' does not implement spawn inside assign`);
  };

  /** A snapshot as xstate's `createMachineSnapshot` makes it (the same keys in the same order, its own methods). */
  private snapshotOf(run: Pick<Run, 'status' | 'output' | 'error' | 'context' | 'leaf' | 'children' | 'historyValue'>): AnyMachineSnapshot {
    return {
      status: run.status,
      output: run.output,
      error: run.error,
      machine: this.machine,
      context: run.context,
      _nodes: run.leaf.nodes,
      value: run.leaf.value,
      tags: run.leaf.tags,
      children: run.children,
      historyValue: run.historyValue || {},
      matches: this.methods.matches,
      hasTag: this.methods.hasTag,
      can: this.methods.can,
      getMeta: this.methods.getMeta,
      toJSON: this.methods.toJSON,
    } as unknown as AnyMachineSnapshot;
  }
}

const compiledMachines = new WeakMap<AnyStateMachine, CompiledMachine | Refusal>();

const compile = (machine: AnyStateMachine): CompiledMachine | Refusal => {
  let compiled = compiledMachines.get(machine);
  if (!compiled) {
    try {
      compiled = new CompiledMachine(machine);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      compiled = error;
    }
    compiledMachines.set(machine, compiled);
  }
  return compiled;
};

/** The compiled form of a machine (compiled at first use, once), or undefined when the compiler refuses it (see `compileRefusalOf`). */
export const compiledOf = (machine: AnyStateMachine): CompiledMachine | undefined => {
  const compiled = compile(machine);
  return compiled instanceof CompiledMachine ? compiled : undefined;
};

/** Why the compiler refuses a machine (undefined: it compiles). */
export const compileRefusalOf = (machine: AnyStateMachine): string | undefined => {
  const compiled = compile(machine);
  return compiled instanceof Refusal ? `the machine '${machine.id}' cannot be compiled: ${compiled.message}` : undefined;
};

/** The compiled form of a machine, or a MACHINE_ERROR naming what the compiler refuses in it. */
export const compileMachine = (machine: AnyStateMachine): CompiledMachine => {
  const compiled = compile(machine);
  if (compiled instanceof Refusal) throw new ReinError('MACHINE_ERROR', compileRefusalOf(machine)!);
  return compiled;
};
