import { and, not, or, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { ReinError } from './host-errors.js';

/*
 * The compile-time half of a machine's compiled form (compiled-machine.ts runs it): the state nodes xstate built from a
 * definition walked once — what the compiler refuses, each transition's guard and actions resolved to implementation
 * functions, the candidates per state node and event type in xstate's priority order, and each transition's entry set
 * and resulting configuration per source configuration (a configuration being one atomic state and its ancestors: the
 * compiler refuses parallel and history states).
 */

export type StateNode = AnyStateMachine['root'];
export interface TransitionDefinition {
  source: StateNode;
  target?: readonly StateNode[];
  actions: readonly unknown[];
  guard?: unknown;
  reenter?: boolean;
}

/** What a guard is given: xstate's guard arguments (one object per selection, shared by the candidates it tests). */
export interface GuardArgs {
  context: any;
  event: EventObject;
}

/**
 * A guard resolved to one function, called as `guard(args, undefined)`: a named guard without params is its
 * implementation itself (no wrapper, no argument object per test), one with params or a combinator a closure.
 */
export type Guard = (args: GuardArgs, params?: undefined) => boolean;

/** One action of a transition or an entry, resolved once (a custom action's implementation, or a builtin's own arguments). */
export type Action =
  | { kind: 'custom'; type: string; exec: ((...args: unknown[]) => unknown) | undefined; params: unknown }
  | { kind: 'assign'; assignment: unknown; params: unknown }
  | { kind: 'enqueue'; collect: (args: any, params: unknown) => void; params: unknown }
  | { kind: 'spawn'; src: unknown; id: unknown; systemId: string | undefined; input: unknown; syncSnapshot: boolean; params: unknown }
  | { kind: 'stop'; actorRef: unknown; params: unknown }
  | { kind: 'sendTo'; to: unknown; event: unknown; id: unknown; delay: unknown; params: unknown }
  | { kind: 'raise'; event: unknown; id: unknown; delay: unknown; params: unknown };

/** A configuration: the active state nodes (root to one atomic leaf), its value and tags. */
export interface Leaf {
  node: StateNode | undefined;
  nodes: StateNode[];
  value: unknown;
  tags: Set<string>;
  /** Its eventless candidates in selection order (the leaf's, then each ancestor's), made at first use. */
  always: Transition[] | undefined;
  /** Per event type, its candidates in selection order with the node each belongs to (types that name an actor excepted). */
  byType: Map<string, Candidates> | undefined;
}

/** An event type's candidates from one configuration, in xstate's selection order, and the state node of each. */
export interface Candidates {
  transitions: Transition[];
  sources: StateNode[];
}

/** One entered state of a plan: its actions (entry, then its initial transition's when entered by default). */
export interface Entered {
  node: StateNode;
  actions: Action[];
}

/** What a transition does from one leaf: the states it enters, in order, and the leaf it ends in. */
export interface Plan {
  entered: Entered[];
  leaf: Leaf;
}

export interface Transition {
  definition: TransitionDefinition;
  guard: Guard | undefined;
  /** How xstate names the guard in a wrapped guard error. */
  guardLabel: string | undefined;
  actions: Action[];
  plans: Map<Leaf, Plan>;
}


export const wildcard = '*';

const checkAnd = (and([]) as unknown as { check: unknown }).check;
const checkOr = (or([]) as unknown as { check: unknown }).check;
const checkNot = (not('x') as unknown as { check: unknown }).check;

const supportedBuiltins = new Set(['xstate.assign', 'xstate.enqueueActions', 'xstate.spawnChild', 'xstate.stopChild', 'xstate.sendTo', 'xstate.raise']);
const supportedEnqueues = new Set(['assign', 'sendTo', 'spawnChild', 'stopChild', 'raise']);

/**
 * Why a machine cannot be compiled: thrown while its structure is read and caught by the compiler, which runs that
 * machine through xstate instead (`compileRefusalOf` names the reason).
 */
export class Refusal extends ReinError<'MACHINE_ERROR'> {
  constructor(message: string) {
    super('MACHINE_ERROR', message);
    this.name = 'Refusal';
  }
}

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

/** Event types xstate makes per actor (its id inside): unbounded over a process's sessions, so never cached by type. */
export const namesAnActor = (eventType: string): boolean => eventType.startsWith('xstate.done.actor.') || eventType.startsWith('xstate.error.actor.') || eventType.startsWith('xstate.snapshot.');

/**
 * xstate's `matchesEventDescriptor` (without its warnings, which the compiler refuses instead): for `a.b.*` — the only
 * partial form the compiler accepts (`check`) — its token-by-token comparison is true exactly for `a.b` and for what
 * starts with `a.b.`, compared here without splitting either string (a done event of an actor is matched per event).
 */
export const matchesDescriptor = (eventType: string, descriptor: string): boolean => {
  if (descriptor === eventType || descriptor === wildcard) return true;
  if (!descriptor.endsWith('.*')) return false;
  const prefix = descriptor.length - 2;
  if (eventType.length !== prefix && (eventType.length < prefix + 1 || eventType.charCodeAt(prefix) !== 46)) return false;
  for (let index = 0; index < prefix; index++) if (eventType.charCodeAt(index) !== descriptor.charCodeAt(index)) return false;
  return true;
};

export const resolveOutput = (mapper: unknown, context: unknown, event: unknown, self: unknown): unknown =>
  typeof mapper === 'function' ? mapper({ context, event, self }) : mapper;

/** A machine's structure, compiled once (see the file comment); `CompiledMachine` runs it. */
export class MachineStructure {
  protected readonly leaves = new Map<StateNode, Leaf>();
  protected readonly leafByNodes = new WeakMap<object, Leaf>();
  protected readonly candidates = new Map<StateNode, Map<string, Transition[]>>();
  /** The candidates of event types that name an actor, per node and the wildcards they match (see `candidatesOf`). */
  protected readonly wildcardCandidates = new Map<StateNode, Map<string, Transition[]>>();
  protected readonly always = new Map<StateNode, Transition[]>();
  protected readonly transitions = new Map<TransitionDefinition, Transition>();
  protected readonly preInitial: Leaf;
  protected readonly initialTransition: Transition;
  protected readonly initialLeaf: Leaf;
  /** Named actions enqueued at run time, resolved once per name. */
  protected readonly named = new Map<string, Action>();

  constructor(readonly machine: AnyStateMachine) {
    this.check(machine.root);
    const root = machine.root;
    const initialNodes = this.initialNodesOf(root);
    this.initialLeaf = this.leafOf([...initialNodes].find((node) => node.type === 'atomic' || node.type === 'final')!);
    this.preInitial = { node: undefined, nodes: [root], value: this.initialLeaf.value, tags: new Set(root.tags), always: undefined, byType: undefined };
    this.initialTransition = this.compileTransition({ target: [...initialNodes], source: root, reenter: true, actions: [] });
  }

  /** Refuse what the compiled form does not implement, for every state node of the machine. */
  protected check(node: StateNode): void {
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

  protected compileTransition(definition: TransitionDefinition): Transition {
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
  protected compileGuard(guard: unknown): Guard {
    const isInline = typeof guard === 'function';
    const name = typeof guard === 'string' ? guard : (guard as { type?: string }).type;
    const resolved = isInline ? guard : (this.machine.implementations.guards as Record<string, unknown>)[name!];
    if (!isInline && !resolved) throw new Refusal(`the guard '${name}' has no implementation in the machine's setup`);
    if (typeof resolved !== 'function') return this.compileGuard(resolved);
    const check = (resolved as { check?: unknown }).check;
    if (check === undefined) {
      const fn = resolved as (args: GuardArgs, params: unknown) => boolean;
      // xstate calls it with its guard arguments and no params: so does the selection, with the implementation itself.
      if (isInline || typeof guard === 'string' || !('params' in (guard as object))) return fn as Guard;
      const params = (guard as { params: unknown }).params;
      return typeof params === 'function' ? (args) => fn(args, params(args)) : (args) => fn(args, params);
    }
    const inner = ((resolved as { guards?: unknown[] }).guards ?? []).map((member) => this.compileGuard(member));
    if (check === checkAnd) {
      return (args) => {
        for (let index = 0; index < inner.length; index++) if (!inner[index]!(args, undefined)) return false;
        return true;
      };
    }
    if (check === checkOr) {
      return (args) => {
        for (let index = 0; index < inner.length; index++) if (inner[index]!(args, undefined)) return true;
        return false;
      };
    }
    if (check === checkNot) {
      const member = inner[0]!;
      return (args) => !member(args, undefined);
    }
    throw new Refusal(`a builtin guard other than and/or/not (${name ?? 'inline'})`);
  }

  /** xstate's action resolution, done once: an inline function or the named implementation, with the entry's params. */
  protected compileAction(action: unknown): Action {
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
  protected runtimeAction(action: unknown): Action {
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

  protected initialNodesOf(node: StateNode): Set<StateNode> {
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
  protected leafOf(node: StateNode): Leaf {
    let leaf = this.leaves.get(node);
    if (!leaf) {
      const nodes = [node, ...properAncestors(node, undefined)].reverse();
      let value: unknown = node.key;
      for (let m = node.parent; m?.parent; m = m.parent) value = { [m.key]: value };
      if (!node.parent) value = {};
      leaf = { node, nodes, value, tags: new Set(nodes.flatMap((each) => each.tags)), always: undefined, byType: undefined };
      this.leaves.set(node, leaf);
      this.leafByNodes.set(nodes, leaf);
    }
    return leaf;
  }

  /** The configuration of a snapshot (one of ours, or one xstate made: restored, or the first). */
  protected configurationOf(snapshot: AnyMachineSnapshot): Leaf {
    const nodes = (snapshot as unknown as { _nodes: StateNode[] })._nodes;
    const known = this.leafByNodes.get(nodes);
    if (known) return known;
    const atomic = nodes.filter((node) => node.type === 'atomic' || node.type === 'final');
    if (atomic.length > 1) throw new ReinError('MACHINE_ERROR', `the compiled machine '${this.machine.id}' was given a parallel configuration`);
    const leaf = atomic.length === 0 ? this.preInitial : this.leafOf(atomic[0]!);
    this.leafByNodes.set(nodes, leaf);
    return leaf;
  }

  /**
   * How many (state node, event type) pairs the transition cache holds, and the per-wildcards lists of the types that
   * name an actor: a diagnostic, flat however many turns run.
   */
  get cachedEventTypes(): number {
    let count = 0;
    for (const byType of this.candidates.values()) count += byType.size;
    for (const leaf of this.leaves.values()) count += leaf.byType?.size ?? 0;
    if (this.preInitial) count += this.preInitial.byType?.size ?? 0;
    for (const byWildcards of this.wildcardCandidates.values()) count += byWildcards.size;
    return count;
  }

  /**
   * xstate's `getCandidates`, once per state node and event type — except the types that name an actor
   * (`xstate.done.actor.root/turn-7`, one per turn or child): kept by type, they grew the shared definition's cache by
   * one entry per turn of every session the process ever ran. Their candidates are those of the wildcards they match,
   * kept once per node and set of wildcards (no exact descriptor names such a type in rein's machines).
   */
  protected candidatesOf(node: StateNode, eventType: string): Transition[] {
    let byType = this.candidates.get(node);
    if (!byType) this.candidates.set(node, (byType = new Map()));
    let list = byType.get(eventType);
    if (list) return list;
    const definitions = node.transitions as Map<string, TransitionDefinition[]>;
    const exact = definitions.get(eventType);
    const wildcards: string[] = [];
    for (const descriptor of definitions.keys()) if (descriptor !== eventType && matchesDescriptor(eventType, descriptor)) wildcards.push(descriptor);
    if (wildcards.length > 1) wildcards.sort((a, b) => b.length - a.length);
    if (namesAnActor(eventType)) {
      if (exact !== undefined) return this.candidateList(definitions, exact, wildcards);
      let byWildcards = this.wildcardCandidates.get(node);
      if (!byWildcards) this.wildcardCandidates.set(node, (byWildcards = new Map()));
      const signature = wildcards.join('\n');
      list = byWildcards.get(signature);
      if (!list) byWildcards.set(signature, (list = this.candidateList(definitions, exact, wildcards)));
      return list;
    }
    list = this.candidateList(definitions, exact, wildcards);
    byType.set(eventType, list);
    return list;
  }

  /** The compiled candidates: the exact descriptor's transitions, then each matching wildcard's (longest first). */
  private candidateList(definitions: Map<string, TransitionDefinition[]>, exact: TransitionDefinition[] | undefined, wildcards: readonly string[]): Transition[] {
    const list = (exact ?? []).map((definition) => this.compileTransition(definition));
    for (const descriptor of wildcards) for (const definition of definitions.get(descriptor)!) list.push(this.compileTransition(definition));
    return list;
  }

  protected alwaysOf(node: StateNode): Transition[] {
    let list = this.always.get(node);
    if (!list) {
      list = ((node.always ?? []) as TransitionDefinition[]).map((definition) => this.compileTransition(definition));
      this.always.set(node, list);
    }
    return list;
  }

  /** A configuration's eventless candidates in xstate's order (the atomic state's first, then each ancestor's), once per leaf. */
  protected eventlessOf(leaf: Leaf): Transition[] {
    let list = leaf.always;
    if (list === undefined) {
      list = [];
      for (let index = leaf.nodes.length - 1; index >= 0; index--) for (const candidate of this.alwaysOf(leaf.nodes[index]!)) list.push(candidate);
      leaf.always = list;
    }
    return list;
  }

  /**
   * An event type's candidates from a configuration (`candidatesOf` of the atomic state, then of each ancestor),
   * flattened once per leaf and type. Not for the types that name an actor (`namesAnActor`: unbounded, never kept).
   */
  protected leafCandidatesOf(leaf: Leaf, eventType: string): Candidates {
    let byType = leaf.byType;
    if (byType === undefined) leaf.byType = byType = new Map();
    let found = byType.get(eventType);
    if (found !== undefined) return found;
    found = { transitions: [], sources: [] };
    for (let index = leaf.nodes.length - 1; index >= 0; index--) {
      const node = leaf.nodes[index]!;
      for (const candidate of this.candidatesOf(node, eventType)) {
        found.transitions.push(candidate);
        found.sources.push(node);
      }
    }
    byType.set(eventType, found);
    return found;
  }

  /** What a transition does from a configuration: xstate's exit and entry sets for a configuration of one leaf. */
  protected planOf(transition: Transition, from: Leaf): Plan {
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
  protected domainOf(t: TransitionDefinition): StateNode | undefined {
    const targets = t.target ?? [];
    if (!t.reenter && targets.every((target) => target === t.source || isDescendant(target, t.source))) return t.source;
    const [head, ...tail] = [...targets, t.source];
    for (const ancestor of properAncestors(head!, undefined)) if (tail.every((node) => isDescendant(node, ancestor))) return ancestor;
    if (t.reenter) return undefined;
    return t.source.machine.root;
  }
}
