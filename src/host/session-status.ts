import type { StepDerived } from '../../models/step.records.js';
import { rootPath } from './root-path.js';

/** The fields of a record (stored or drafted) that decide a session's status. */
export interface StatusSource {
  type: string;
  actor: string;
  data?: unknown;
}

/**
 * What a session's log says about its status so far (README: `rein sessions`): the root's `session.ended` outcome,
 * whether the newest word is an interruption, the in-doubt effects the last resume left waiting for a confirmation
 * and not settled since, and the root machine's last state. Immutable: `nextStatusState` returns a new value.
 */
export interface SessionStatusState {
  ended?: string;
  interrupted: boolean;
  /** The interruption is a pause for the cost budget (`session.interrupted.budget`): resumable with a raised budget. */
  budget?: boolean;
  /** Effect ids the latest resume resolved `awaiting-confirmation` that no later record of theirs settled or re-decided. */
  waiting: readonly string[];
  /** `idle`, `awaiting-approval` or `active`, from the root's newest `actor.transitioned`. */
  machine?: string;
  /** The newest word is `session.forked`: a fork nobody has resumed yet (nothing runs it until `rein resume`). */
  forked?: boolean;
}

export const initialStatusState: SessionStatusState = { interrupted: false, waiting: [] };

/** The status a root state value stands for (a step record stores `running.awaitingApproval` as a path). */
const machineStatusOf = (to: unknown): string => {
  if (to === 'idle') return 'idle';
  if (to === 'running.awaitingApproval') return 'awaiting-approval';
  return typeof to === 'object' && to !== null && (to as { running?: unknown }).running === 'awaitingApproval' ? 'awaiting-approval' : 'active';
};

/**
 * Fold one record into the status state. A resume supersedes an interruption and every earlier confirmation wait (it
 * decides each in-doubt effect again); an `effect.resolved` of `awaiting-confirmation` makes its effect wait, any other
 * resolution or any later record of that effect (its settlement, a rerun's records: anything carrying its `effectId`)
 * ends the wait; a root transition is the machine's
 * state and, being newer, supersedes an interruption.
 */
export const nextStatusState = (state: SessionStatusState, record: StatusSource): SessionStatusState => {
  const data = (record.data ?? {}) as { status?: unknown; effectId?: unknown; resolution?: unknown; to?: unknown; budget?: unknown };
  if (record.type === 'effect.resolved' && typeof data.effectId === 'string') {
    const others = state.waiting.filter((id) => id !== data.effectId);
    return { ...state, waiting: data.resolution === 'awaiting-confirmation' ? [...others, data.effectId] : others };
  }
  if (typeof data.effectId === 'string' && state.waiting.includes(data.effectId)) {
    return { ...state, waiting: state.waiting.filter((id) => id !== data.effectId) };
  }
  if (record.type === 'step.derived') return stepStatusState(state, record.data as StepDerived);
  if (record.actor !== rootPath) return state;
  switch (record.type) {
    case 'session.ended':
      return { ...state, ended: String(data.status) };
    case 'session.forked':
      return { ...state, forked: true, interrupted: false, budget: false };
    case 'session.interrupted':
      return { ...state, interrupted: true, budget: data.budget !== undefined && data.budget !== null, forked: false };
    case 'session.resumed':
      return { ...state, interrupted: false, budget: false, forked: false, waiting: [] };
    case 'actor.transitioned':
      return { ...reopened(state, (data as { from?: unknown }).from), interrupted: false, budget: false, forked: false, machine: machineStatusOf(data.to) };
    default:
      return state;
  }
};

/** A root transition out of `budgetExhausted` (a raised budget, `session.budgets-raised`) undoes that end. */
const reopened = (state: SessionStatusState, from: unknown): SessionStatusState => {
  if (from !== 'budgetExhausted' || state.ended === undefined) return state;
  const { ended: _ended, ...rest } = state;
  return rest;
};

/** A step record's root transitions and root `session.ended`, folded in order (as the records they replaced would be). */
const stepStatusState = (state: SessionStatusState, step: StepDerived): SessionStatusState => {
  let next = state;
  for (const entry of step.derived) {
    if (entry[1] !== rootPath) continue;
    if (entry[0] === 0) {
      const machine = machineStatusOf(entry[4]);
      // Most steps leave the status as it was (active, nothing interrupted): no new state then.
      if (next.machine === machine && next.interrupted === false && next.budget === false && (entry[3] !== 'budgetExhausted' || next.ended === undefined)) continue;
      next = { ...reopened(next, entry[3]), interrupted: false, budget: false, machine };
    }
    else if (entry[0] === 2 && entry[2] === 'session.ended') next = { ...next, ended: String(entry[3].status) };
  }
  return next;
};

/**
 * The status a state stands for: the `session.ended` outcome; else `forked` for a fork nobody resumed yet; else
 * `awaiting-budget` for a pause before a model call the cost budget could not cover (`rein resume <id> --max-cost
 * <usd>` continues it); else `interrupted`; else `awaiting-confirmation` while
 * an in-doubt effect waits for a person to confirm its rerun (nothing runs until `rein resume --yes` or
 * `rein approve <id> <effectId>`); else the machine's `idle`, `awaiting-approval` or `active`; undefined when nothing
 * seen decides it.
 */
export const statusOfState = (state: SessionStatusState): string | undefined => {
  if (state.ended !== undefined) return state.ended;
  if (state.forked) return 'forked';
  if (state.interrupted) return state.budget ? 'awaiting-budget' : 'interrupted';
  if (state.waiting.length > 0) return 'awaiting-confirmation';
  return state.machine;
};

/** Fold records, oldest first, into a status state (from `initialStatusState`, or `from`). */
export const statusStateOf = (records: Iterable<StatusSource>, from: SessionStatusState = initialStatusState): SessionStatusState => {
  let state = from;
  for (const record of records) state = nextStatusState(state, record);
  return state;
};

/**
 * The status records (oldest first) leave a session in; a window of the newest records serves as well as the whole
 * log, provided it reaches the root's last transition. Undefined when none of them decides it.
 */
export const sessionStatusOf = (records: Iterable<StatusSource>): string | undefined => statusOfState(statusStateOf(records));
