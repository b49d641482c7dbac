import { and, createActor, not, or, raise, sendTo, spawnChild, stopChild, type ActorScope, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { ReinError } from './host-errors.js';
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

/* eslint-disable @typescript-eslint/no-explicit-any */
type StateNode = AnyStateMachine['root'];
interface TransitionDefinition {
  source: StateNode;
  target?: readonly StateNode[];
  actions: readonly unknown[];
  guard?: unknown;
  reenter?: boolean;
}

/** A guard resolved to one function of (context, event). */
type Guard = (context: any, event: EventObject) => boolean;

/** One action of a transition or an entry, resolved once (a custom action's implementation, or a builtin's own arguments). */
type Action =
  | { kind: 'custom'; type: string; exec: ((...args: unknown[]) => unknown) | undefined; params: unknown }
  | { kind: 'assign'; assignment: unknown; params: unknown }
  | { kind: 'enqueue'; collect: (args: any, params: unknown) => void; params: unknown }
  | { kind: 'spawn'; src: unknown; id: unknown; systemId: string | undefined; input: unknown; syncSnapshot: boolean; params: unknown }
  | { kind: 'stop'; actorRef: unknown; params: unknown }
  | { kind: 'sendTo'; to: unknown; event: unknown; id: unknown; delay: unknown; params: unknown }
  | { kind: 'raise'; event: unknown; id: unknown; delay: unknown; params: unknown };

/** A configuration: the active state nodes (root to one atomic leaf), its value and tags. */
interface Leaf {
  node: StateNode | undefined;
  nodes: StateNode[];
  value: unknown;
  tags: Set<string>;
}

/** One entered state of a plan: its actions (entry, then its initial transition's when entered by default). */
interface Entered {
  node: StateNode;
  actions: Action[];
}

/** What a transition does from one leaf: the states it enters, in order, and the leaf it ends in. */
interface Plan {
  entered: Entered[];
  leaf: Leaf;
}

interface Transition {
  definition: TransitionDefinition;
  guard: Guard | undefined;
  /** How xstate names the guard in a wrapped guard error. */
  guardLabel: string | undefined;
  actions: Action[];
  plans: Map<Leaf, Plan>;
}

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
  queue: EventObject[];
  scope: ActorScope<any, EventObject>;
}

const wildcard = '*';
const specialParent = '#_parent';
const specialInternal = '#_internal';

// xstate's own execute functions for its builtins: what its actions hand the executor as `exec`.
const executeSpawn = (spawnChild('x') as unknown as { execute: (...args: unknown[]) => void }).execute;
const executeStop = (stopChild('x') as unknown as { execute: (...args: unknown[]) => void }).execute;
const executeSendTo = (sendTo('x', { type: 'x' }) as unknown as { execute: (...args: unknown[]) => void }).execute;
const executeRaise = (raise({ type: 'x' }) as unknown as { execute: (...args: unknown[]) => void }).execute;
const checkAnd = (and([]) as unknown as { check: unknown }).check;
const checkOr = (or([]) as unknown as { check: unknown }).check;
const checkNot = (not('x') as unknown as { check: unknown }).check;

const supportedBuiltins = new Set(['xstate.assign', 'xstate.enqueueActions', 'xstate.spawnChild', 'xstate.stopChild', 'xstate.sendTo', 'xstate.raise']);
const supportedEnqueues = new Set(['assign', 'sendTo', 'spawnChild', 'stopChild', 'raise']);

/** Why a machine cannot be compiled. */
class Refusal extends Error {}

/** xstate's `isDescendant`, as it is (an undefined parent: every node). */
const isDescendant = (child: StateNode, parent: StateNode | undefined): boolean => {
  let marker = child;
  while (marker.parent && marker.parent !== parent) marker = marker.parent;
  return marker.parent === parent;
};

const properAncestors = (node: StateNode, to: StateNode | undefined): StateNode[] => {
  const ancestors: StateNode[] = [];
  if (to === node) return ancestors;
  for (let m = node.parent; m && m !== to; m = m.parent) ancestors.push(m);
  return ancestors;
};

/** xstate's `matchesEventDescriptor` (without its warnings, which the compiler refuses instead). */
const matchesDescriptor = (eventType: string, descriptor: string): boolean => {
  if (descriptor === eventType || descriptor === wildcard) return true;
  if (!descriptor.endsWith('.*')) return false;
  const partial = descriptor.split('.');
  const tokens = eventType.split('.');
  for (let index = 0; index < partial.length; index++) {
    if (partial[index] === '*') return index === partial.length - 1;
    if (partial[index] !== tokens[index]) return false;
  }
  return true;
};

const resolveOutput = (mapper: unknown, context: unknown, event: unknown, self: unknown): unknown =>
  typeof mapper === 'function' ? mapper({ context, event, self }) : mapper;

/** A machine compiled (see the file comment): `transition` and `getInitialSnapshot` with xstate's signatures and results. */
export class CompiledMachine {
  private readonly leaves = new Map<StateNode, Leaf>();
  private readonly leafByNodes = new WeakMap<object, Leaf>();
  private readonly candidates = new Map<StateNode, Map<string, Transition[]>>();
  private readonly always = new Map<StateNode, Transition[]>();
  private readonly transitions = new Map<TransitionDefinition, Transition>();
  private readonly preInitial: Leaf;
  private readonly initialTransition: Transition;
  private readonly methods: Record<'matches' | 'hasTag' | 'can' | 'getMeta' | 'toJSON', unknown>;
  private enqueued: Action[] = [];
  /** Named actions enqueued at run time, resolved once per name. */
  private readonly named = new Map<string, Action>();
  private readonly enqueue: any;

  constructor(readonly machine: AnyStateMachine) {
    this.check(machine.root);
    const root = machine.root;
    const initialNodes = this.initialNodesOf(root);
    const initialLeaf = this.leafOf([...initialNodes].find((node) => node.type === 'atomic' || node.type === 'final')!);
    this.preInitial = { node: undefined, nodes: [root], value: initialLeaf.value, tags: new Set(root.tags) };
    this.initialTransition = this.compileTransition({ target: [...initialNodes], source: root, reenter: true, actions: [] });
    // The snapshot methods are xstate's own (taken from a snapshot it made): a compiled snapshot has the same shape.
    const sample = machine.resolveState({ value: initialLeaf.value as never, context: {} as never }) as unknown as Record<string, unknown>;
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

  // --- compile time -------------------------------------------------------------------------------------------------

  /** Refuse what the compiled form does not implement, for every state node of the machine. */
  private check(node: StateNode): void {
    const where = `state '${node.id}'`;
    if (node.type !== 'atomic' && node.type !== 'compound' && node.type !== 'final') throw new Refusal(`${where} is a ${node.type} state`);
    if (node.invoke.length > 0) throw new Refusal(`${where} invokes an actor`);
    if (node.config.after) throw new Refusal(`${where} has delayed transitions`);
    if (node.exit.length > 0) throw new Refusal(`${where} has exit actions`);
    for (const action of [...node.entry, ...(node.initial?.actions ?? [])]) this.compileAction(action);
    for (const list of node.transitions.values()) for (const transition of list) this.compileTransition(transition as TransitionDefinition);
    for (const transition of node.always ?? []) this.compileTransition(transition as TransitionDefinition);
    for (const descriptor of node.transitions.keys()) {
      if (descriptor !== wildcard && descriptor.includes('*') && !/^[^*]*\.\*$/.test(descriptor)) throw new Refusal(`${where} has the event descriptor '${descriptor}'`);
    }
    for (const child of Object.values(node.states)) this.check(child);
  }

  private compileTransition(definition: TransitionDefinition): Transition {
    let compiled = this.transitions.get(definition);
    if (!compiled) {
      const guard = definition.guard;
      compiled = {
        definition,
        guard: guard === undefined ? undefined : this.compileGuard(guard),
        guardLabel: typeof guard === 'string' ? guard : typeof guard === 'object' && guard !== null ? (guard as { type: string }).type : undefined,
        actions: definition.actions.map((action) => this.compileAction(action)),
        plans: new Map(),
      };
      this.transitions.set(definition, compiled);
    }
    return compiled;
  }

  /** xstate's `evaluateGuard`, resolved once: a named guard's implementation, `and`/`or`/`not` over resolved guards. */
  private compileGuard(guard: unknown): Guard {
    const isInline = typeof guard === 'function';
    const name = typeof guard === 'string' ? guard : (guard as { type?: string }).type;
    const resolved = isInline ? guard : (this.machine.implementations.guards as Record<string, unknown>)[name!];
    if (!isInline && !resolved) throw new Refusal(`the guard '${name}' is not implemented`);
    if (typeof resolved !== 'function') return this.compileGuard(resolved);
    const check = (resolved as { check?: unknown }).check;
    if (check === undefined) {
      const fn = resolved as (args: unknown, params: unknown) => boolean;
      if (isInline || typeof guard === 'string' || !('params' in (guard as object))) return (context, event) => fn({ context, event }, undefined);
      const params = (guard as { params: unknown }).params;
      return typeof params === 'function' ? (context, event) => fn({ context, event }, params({ context, event })) : (context, event) => fn({ context, event }, params);
    }
    const inner = ((resolved as { guards?: unknown[] }).guards ?? []).map((member) => this.compileGuard(member));
    if (check === checkAnd) return (context, event) => inner.every((member) => member(context, event));
    if (check === checkOr) return (context, event) => inner.some((member) => member(context, event));
    if (check === checkNot) {
      const member = inner[0]!;
      return (context, event) => !member(context, event);
    }
    throw new Refusal(`a builtin guard other than and/or/not (${name ?? 'inline'})`);
  }

  /** xstate's action resolution, done once: an inline function or the named implementation, with the entry's params. */
  private compileAction(action: unknown): Action {
    const isInline = typeof action === 'function';
    const name = typeof action === 'string' ? action : typeof action === 'object' && action !== null ? (action as { type: string }).type : ((action as { name?: string }).name || '(anonymous)');
    const resolved = isInline ? (action as object) : (this.machine.implementations.actions as Record<string, unknown>)[name];
    const params = isInline || typeof action === 'string' ? undefined : 'params' in (action as object) ? (action as { params: unknown }).params : undefined;
    if (!resolved || !('resolve' in (resolved as object))) return { kind: 'custom', type: name, exec: resolved as ((...args: unknown[]) => unknown) | undefined, params };
    const builtin = resolved as Record<string, unknown> & { type: string };
    if (!supportedBuiltins.has(builtin.type)) throw new Refusal(`the builtin action ${builtin.type}`);
    switch (builtin.type) {
      case 'xstate.assign':
        return { kind: 'assign', assignment: builtin.assignment, params };
      case 'xstate.enqueueActions': {
        const collect = builtin.collect as (args: unknown, params: unknown) => void;
        for (const [, used] of String(collect).matchAll(/\benqueue\.(\w+)/g)) {
          if (!supportedEnqueues.has(used!)) throw new Refusal(`enqueue.${used} in an enqueueActions action`);
        }
        return { kind: 'enqueue', collect, params };
      }
      case 'xstate.spawnChild':
        if (typeof builtin.src === 'string' && builtin.src.startsWith('xstate.invoke.')) throw new Refusal('a spawned invoke source');
        return { kind: 'spawn', src: builtin.src, id: builtin.id, systemId: builtin.systemId as string | undefined, input: builtin.input, syncSnapshot: builtin.syncSnapshot as boolean, params };
      case 'xstate.stopChild':
        return { kind: 'stop', actorRef: builtin.actorRef, params };
      case 'xstate.sendTo':
        return { kind: 'sendTo', to: builtin.to, event: builtin.event, id: builtin.id, delay: builtin.delay, params };
      default:
        return { kind: 'raise', event: builtin.event, id: builtin.id, delay: builtin.delay, params };
    }
  }

  /** An action enqueued at run time, resolved as at compile time (a refusal now is a MACHINE_ERROR). */
  private runtimeAction(action: unknown): Action {
    try {
      if (typeof action !== 'string') return this.compileAction(action);
      let named = this.named.get(action);
      if (!named) this.named.set(action, (named = this.compileAction(action)));
      return named;
    } catch (error) {
      if (error instanceof Refusal) throw new ReinError('MACHINE_ERROR', `the compiled machine '${this.machine.id}' does not implement ${error.message}`);
      throw error;
    }
  }

  private initialNodesOf(node: StateNode): Set<StateNode> {
    const set = new Set<StateNode>();
    const visit = (current: StateNode) => {
      if (set.has(current)) return;
      set.add(current);
      if (current.type === 'compound') visit(current.initial.target[0] as StateNode);
    };
    visit(node);
    return set;
  }

  /** The configuration whose atomic state is `node`: its nodes in document order, its state value. */
  private leafOf(node: StateNode): Leaf {
    let leaf = this.leaves.get(node);
    if (!leaf) {
      const nodes = [node, ...properAncestors(node, undefined)].reverse();
      let value: unknown = node.key;
      for (let m = node.parent; m?.parent; m = m.parent) value = { [m.key]: value };
      if (!node.parent) value = {};
      leaf = { node, nodes, value, tags: new Set(nodes.flatMap((each) => each.tags)) };
      this.leaves.set(node, leaf);
      this.leafByNodes.set(nodes, leaf);
    }
    return leaf;
  }

  /** The configuration of a snapshot (one of ours, or one xstate made: restored, or the first). */
  private configurationOf(snapshot: AnyMachineSnapshot): Leaf {
    const nodes = (snapshot as unknown as { _nodes: StateNode[] })._nodes;
    const known = this.leafByNodes.get(nodes);
    if (known) return known;
    const atomic = nodes.filter((node) => node.type === 'atomic' || node.type === 'final');
    if (atomic.length > 1) throw new ReinError('MACHINE_ERROR', `the compiled machine '${this.machine.id}' was given a parallel configuration`);
    const leaf = atomic.length === 0 ? this.preInitial : this.leafOf(atomic[0]!);
    this.leafByNodes.set(nodes, leaf);
    return leaf;
  }

  /** xstate's `getCandidates`, once per state node and event type. */
  private candidatesOf(node: StateNode, eventType: string): Transition[] {
    let byType = this.candidates.get(node);
    if (!byType) this.candidates.set(node, (byType = new Map()));
    let list = byType.get(eventType);
    if (!list) {
      const definitions = node.transitions as Map<string, TransitionDefinition[]>;
      const exact = definitions.get(eventType) ?? [];
      const wild = [...definitions.keys()]
        .filter((descriptor) => descriptor !== eventType && matchesDescriptor(eventType, descriptor))
        .sort((a, b) => b.length - a.length)
        .flatMap((key) => definitions.get(key)!);
      list = [...exact, ...wild].map((definition) => this.compileTransition(definition));
      byType.set(eventType, list);
    }
    return list;
  }

  private alwaysOf(node: StateNode): Transition[] {
    let list = this.always.get(node);
    if (!list) {
      list = ((node.always ?? []) as TransitionDefinition[]).map((definition) => this.compileTransition(definition));
      this.always.set(node, list);
    }
    return list;
  }

  /** What a transition does from a configuration: xstate's exit and entry sets for a configuration of one leaf. */
  private planOf(transition: Transition, from: Leaf): Plan {
    let plan = transition.plans.get(from);
    if (plan) return plan;
    const t = transition.definition;
    const targets = t.target ?? [];
    const active = new Set(from.nodes);
    let domain: StateNode | undefined;
    if (targets.length > 0) {
      domain = this.domainOf(t);
      const exits: StateNode[] = [];
      if (t.reenter && t.source === domain) exits.push(domain!);
      for (const node of from.nodes) if (isDescendant(node, domain) && !exits.includes(node)) exits.push(node);
      for (const node of exits) active.delete(node);
    }
    const toEnter = new Set<StateNode>();
    const byDefault = new Set<StateNode>();
    if (from === this.preInitial) byDefault.add(this.machine.root);
    const addDescendants = (node: StateNode) => {
      if (node.type !== 'compound') return;
      const initial = node.initial.target[0] as StateNode;
      toEnter.add(initial);
      byDefault.add(initial);
      addDescendants(initial);
      for (const ancestor of properAncestors(initial, node)) toEnter.add(ancestor);
    };
    if (targets.length > 0) {
      for (const s of targets) {
        if (t.source !== s || t.source !== domain || t.reenter) {
          toEnter.add(s);
          byDefault.add(s);
        }
        addDescendants(s);
      }
      const reentrancy = !t.source.parent && t.reenter ? undefined : domain;
      for (const s of targets) {
        for (const ancestor of properAncestors(s, domain)) if (!reentrancy || isDescendant(ancestor, reentrancy)) toEnter.add(ancestor);
      }
    }
    const entered: Entered[] = [...toEnter]
      .sort((a, b) => a.order - b.order)
      .map((node) => ({ node, actions: [...node.entry, ...(byDefault.has(node) ? (node.initial?.actions ?? []) : [])].map((action) => this.compileAction(action)) }));
    for (const { node } of entered) active.add(node);
    const atomic = [...active].filter((node) => node.type === 'atomic' || node.type === 'final');
    if (atomic.length !== 1) throw new ReinError('MACHINE_ERROR', `the compiled machine '${this.machine.id}' reached a configuration without exactly one atomic state`);
    plan = { entered, leaf: this.leafOf(atomic[0]!) };
    transition.plans.set(from, plan);
    return plan;
  }

  /** xstate's `getTransitionDomain` (no history states). */
  private domainOf(t: TransitionDefinition): StateNode | undefined {
    const targets = t.target ?? [];
    if (!t.reenter && targets.every((target) => target === t.source || isDescendant(target, t.source))) return t.source;
    const [head, ...tail] = [...targets, t.source];
    for (const ancestor of properAncestors(head!, undefined)) if (tail.every((node) => isDescendant(node, ancestor))) return ancestor;
    if (t.reenter) return undefined;
    return t.source.machine.root;
  }

  // --- run time -----------------------------------------------------------------------------------------------------

  /** xstate's `getInitialSnapshot`: the context from the input, the initial configuration entered, then a macrostep. */
  getInitialSnapshot(scope: ActorScope<any, EventObject>, input: unknown): AnyMachineSnapshot {
    const initEvent = { type: 'xstate.init', input } as EventObject;
    const contextConfig = this.machine.config.context;
    const run: Run = {
      context: typeof contextConfig !== 'function' && contextConfig ? contextConfig : {},
      children: {},
      leaf: this.preInitial,
      status: 'active',
      output: undefined,
      error: undefined,
      historyValue: {},
      version: 0,
      queue: [],
      scope,
    };
    let preInitialContext = run.context;
    try {
      if (typeof contextConfig === 'function') {
        const made = contextConfig({ spawn: this.noSpawn, input, self: scope.self });
        run.context = Object.assign({}, run.context, made);
        preInitialContext = run.context;
      }
      this.microstep(run, this.initialTransition, initEvent);
      this.macrostep(run, initEvent, true);
      return this.snapshotOf(run);
    } catch (error) {
      return this.snapshotOf({ ...run, context: preInitialContext, children: {}, leaf: this.preInitial, status: 'error', output: undefined, error });
    }
  }

  /** xstate's `transition` (its macrostep): the snapshot after `event` and everything it set off inside this actor. */
  transition(snapshot: AnyMachineSnapshot, event: EventObject, scope: ActorScope<any, EventObject>): AnyMachineSnapshot {
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
      queue: [],
      scope,
    };
    this.macrostep(run, event, false);
    return run.version === 0 ? snapshot : this.snapshotOf(run);
  }

  /** The `ActorLogic` this compiled form stands in for (xstate's machine, for what the host does not run through here). */
  get logic(): AnyStateMachine {
    return this.machine;
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
      let selected: Transition | undefined = selectEventless ? this.selectEventless(run.leaf, run.context, nextEvent) : undefined;
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
    const nodes = leaf.nodes;
    for (let index = nodes.length - 1; index >= 0; index--) {
      const node = nodes[index]!;
      for (const candidate of this.candidatesOf(node, event.type)) {
        if (!candidate.guard) return candidate;
        let passed: boolean;
        try {
          passed = candidate.guard(context, event);
        } catch (error) {
          throw new Error(`Unable to evaluate guard ${candidate.guardLabel ? `'${candidate.guardLabel}' ` : ''}in transition for event '${event.type}' in state node '${node.id}':\n${(error as Error).message}`);
        }
        if (passed) return candidate;
      }
    }
    return undefined;
  }

  private selectEventless(leaf: Leaf, context: unknown, event: EventObject): Transition | undefined {
    const nodes = leaf.nodes;
    for (let index = nodes.length - 1; index >= 0; index--) {
      for (const candidate of this.alwaysOf(nodes[index]!)) {
        if (!candidate.guard || candidate.guard(context, event)) return candidate;
      }
    }
    return undefined;
  }

  /** xstate's microstep for one transition: its actions, then each entered state's, a final state ending the machine. */
  private microstep(run: Run, transition: Transition, event: EventObject): void {
    const plan = this.planOf(transition, run.leaf);
    this.runActions(run, transition.actions, event);
    const root = this.machine.root;
    for (const { node, actions } of plan.entered) {
      this.runActions(run, actions, event);
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
    for (const child of Object.values(children)) this.runAction(run, { kind: 'stop', actorRef: child, params: undefined }, event);
    if (!removing) {
      run.children = children;
      run.version = version;
    }
  }

  private runActions(run: Run, actions: readonly Action[], event: EventObject): void {
    for (let index = 0; index < actions.length; index++) this.runAction(run, actions[index]!, event);
  }

  /** One action, as xstate's `resolveAndExecuteActionsWithContext` resolves and hands it to the executor. */
  private runAction(run: Run, action: Action, event: EventObject): void {
    const scope = run.scope;
    const args = { context: run.context, event, self: scope.self, system: scope.system };
    const params = typeof action.params === 'function' ? action.params({ context: run.context, event }) : action.params;
    switch (action.kind) {
      case 'custom':
        scope.actionExecutor({ type: action.type, info: args, params, exec: action.exec } as never);
        return;
      case 'assign': {
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
        run.context = Object.assign({}, run.context, update);
        run.version++;
        return;
      }
      case 'enqueue': {
        this.enqueued = [];
        action.collect({ context: args.context, event, enqueue: this.enqueue, check: (guard: unknown) => this.compileGuard(guard)(run.context, event), self: scope.self, system: scope.system }, params);
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
        run.children = { ...run.children, [id as string]: actorRef! };
        run.version++;
        const resolved = { id: action.id, systemId: action.systemId, actorRef, src, input };
        scope.actionExecutor({ type: 'xstate.spawnChild', info: args, params: resolved, exec: executeSpawn.bind(null, scope, resolved) } as never);
        return;
      }
      case 'stop': {
        const refOrId = typeof action.actorRef === 'function' ? action.actorRef(args, params) : action.actorRef;
        const ref = (typeof refOrId === 'string' ? run.children[refOrId] : refOrId) as AnyActorRef | undefined;
        if (ref) {
          const children = { ...run.children };
          delete children[ref.id];
          run.children = children;
        }
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
