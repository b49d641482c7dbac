import type { ActorRefLike, InspectionEvent } from 'xstate';
import type { StateValue } from '../../models/actor.records.js';
import type { EmitRecordParams, RequestEffectParams } from '../../machines/session.machine.js';

import type { DerivedDraft } from './step-record.js';

export type { DerivedDraft } from './step-record.js';

interface ActorState {
  path: string;
  value: StateValue | null;
  valueKey: string;
  context: unknown;
  pending: DerivedDraft[];
  /** When the collector first saw this actor (drafts of several actors drain in this order). */
  seen: number;
}

const pathOf = (ref: ActorRefLike): string => {
  const context = (ref.getSnapshot() as { context?: { path?: unknown } } | undefined)?.context;
  if (typeof context?.path === 'string') return context.path;
  return (ref as { id?: string }).id ?? 'unknown';
};

const draftOfAction = (path: string, action: { type: string; params?: unknown }): DerivedDraft | undefined => {
  if (action.type === 'requestEffect') {
    const params = action.params as RequestEffectParams;
    const callId = typeof params.args.callId === 'string' ? params.args.callId : undefined;
    return { type: 'effect.requested', actor: path, data: { effectId: params.effectId, kind: params.kind, args: params.args }, ...(callId ? { corr: callId } : {}) };
  }
  if (action.type === 'emitRecord') {
    const params = action.params as EmitRecordParams & { corr?: string };
    return { type: params.type, actor: path, data: params.data, ...(params.corr ? { corr: params.corr } : {}) };
  }
  return undefined;
};

const actorEventPrefix = /^xstate\.(?:done|error)\.actor\./;

/**
 * Turns XState's inspection stream into derived records. An actor's requested effects and emitted records are held
 * until its next snapshot, so each step lists `actor.transitioned` first and then what that transition asked for.
 * Output order depends only on the order XState processes events, so replay regenerates it exactly.
 */
export class StepCollector {
  private readonly actors = new Map<ActorRefLike, ActorState>();
  /** Actors holding drafts not yet flushed (so a drain costs what changed, not the size of the tree). */
  private readonly holding = new Set<ActorState>();
  private seen = 0;
  private drafts: DerivedDraft[] = [];
  private stopped: string[] = [];
  /**
   * A child's done (or error) event named by the child's path where its actor id is not its path (a delegation's
   * children are spawned under their task index): records name actors by path, whatever id XState keys them by.
   */
  private readonly eventNames = new WeakMap<object, string>();
  /** While muted (restoring from a snapshot) the collector learns state values but records nothing. */
  muted = false;

  readonly inspect = (event: InspectionEvent): void => {
    if (event.type === '@xstate.event') {
      const relayed = event.event as { type: string; actorId?: unknown };
      if (event.sourceRef && typeof relayed.actorId === 'string' && actorEventPrefix.test(relayed.type)) {
        const path = pathOf(event.sourceRef);
        if (path !== relayed.actorId) this.eventNames.set(relayed, `${relayed.type.slice(0, relayed.type.length - relayed.actorId.length)}${path}`);
      }
      return;
    }
    if (event.type === '@xstate.action') {
      const state = this.stateOf(event.actorRef);
      const draft = draftOfAction(state.path, event.action);
      if (draft && !this.muted) {
        state.pending.push(draft);
        this.holding.add(state);
      }
      return;
    }
    if (event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as { value?: StateValue; context?: unknown; status?: string };
    if (snapshot.value === undefined) return;
    const state = this.stateOf(event.actorRef);
    const valueKey = typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value);
    const changed = valueKey !== state.valueKey || snapshot.context !== state.context;
    if (changed && !this.muted) {
      const name = this.eventNames.get(event.event) ?? event.event.type;
      this.drafts.push({ type: 'actor.transitioned', actor: state.path, data: { actor: state.path, event: name, from: state.value, to: snapshot.value } });
    }
    state.value = snapshot.value;
    state.valueKey = valueKey;
    state.context = snapshot.context;
    if (state.pending.length > 0) {
      for (const draft of state.pending) this.drafts.push(draft);
      state.pending = [];
      this.holding.delete(state);
    }
    if (snapshot.status === 'done' || snapshot.status === 'stopped' || snapshot.status === 'error') {
      this.actors.delete(event.actorRef);
      if (!this.muted) this.stopped.push(state.path);
    }
  };

  /** The paths of actors that ended or were stopped since the last call (their effects must not run on). */
  drainStopped(): string[] {
    const stopped = this.stopped;
    this.stopped = [];
    return stopped;
  }

  /** Take everything collected since the last drain, including actions of actors that emitted no snapshot. */
  drain(): DerivedDraft[] {
    // In the order the actors were first seen, as a walk over every actor would give.
    const holding = this.holding.size > 1 ? [...this.holding].sort((left, right) => left.seen - right.seen) : this.holding;
    for (const state of holding) {
      for (const draft of state.pending) this.drafts.push(draft);
      state.pending = [];
    }
    this.holding.clear();
    const drafts = this.drafts;
    this.drafts = [];
    return drafts;
  }

  private stateOf(ref: ActorRefLike): ActorState {
    let state = this.actors.get(ref);
    if (!state) {
      state = { path: pathOf(ref), value: null, valueKey: '', context: undefined, pending: [], seen: this.seen++ };
      this.actors.set(ref, state);
    }
    return state;
  }
}
