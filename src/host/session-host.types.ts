/*
 * The shapes a session host is driven by and reports: an input for one step, the result of a run, and the host's
 * options (with the default abandon grace period). Split from session-host.ts so the effect runner and the writer can
 * name them without importing the host.
 */
import type { CostBudgetStop, SessionOutcome } from '../../models/session.records.js';
import type { Usage } from '../../models/budgets.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import type { EffectExecutors, FactDraft } from '../effects/effect.js';
import type { MachineTree } from './machine-tree.js';
import type { StatusSource } from './session-status.js';
import type { CapabilityDeriver } from '../capabilities/capability-deriver.js';

/** An input for one step: the host stamps ids, time and seq. `actor` defaults to the root agent. */
export interface InputDraft {
  type: string;
  data: Record<string, unknown>;
  actor?: string;
  cause?: string;
  corr?: string;
  /** Facts written in the same batch, before the input (e.g. `tool.started` of a read-only tool). */
  facts?: readonly FactDraft[];
  /** Blobs those facts reference, written into the stream in the same atomic batch. */
  blobs?: readonly Uint8Array[];
  /** Checked in the queue right before the input is applied; an error rejects the step and writes nothing. */
  precondition?: () => Error | undefined;
  /** Checked in the queue right before the input is applied; true drops the input silently (nothing written). */
  skipIf?: () => boolean;
  /** Reject the step (nothing written) when the session has already ended, instead of dropping it silently. */
  refuseWhenEnded?: boolean;
  /**
   * The data was built by rein's own effect executors (a settlement), not handed in by a host or a person: it is
   * stored as built, without passing its zod schema on every step. The replay property (`rein/testing`) checks that
   * every record of a run is exactly what its schema accepts, so an executor that builds data its schema would change
   * or refuse fails the tests instead.
   */
  trusted?: boolean;
  /**
   * Resolve once the step's batch is written rather than acknowledged. For a settlement: its place in the log is fixed
   * when it is applied, and nothing the executor does next depends on its durability (the step is still acknowledged
   * to subscribers only after the commit covering it).
   */
  written?: boolean;
  /**
   * The effects this step requests are handed here instead of started: the caller starts them (`startEffect`) once
   * what must come before them is recorded — resume raising a spent budget holds the next model call until
   * `session.resumed` and the in-doubt decisions are written.
   */
  holdEffects?: (requests: readonly RecordEnvelope[]) => void;
}

/** How a session run stopped: one of the final outcomes, or `paused` (waiting for a person, resumable). */
export interface SessionResult {
  sessionId: string;
  status: SessionOutcome | 'paused' | 'interrupted';
  reason?: string;
  head: number;
  usage: Usage;
  /** The validated final answer of a session with an output schema that completed (`session.ended.output`). */
  output?: unknown;
  /** Why no answer validated (the last answer's errors), when that failed the session. */
  outputErrors?: string[];
  /**
   * What a `paused` session waits for: a person's answer to an approval (`approval`) or to an in-doubt effect's
   * confirmation (`confirmation`), the next message of a session that is only idle (`message`), or a higher cost
   * budget (`budget`: it paused before a model call its budget could not pay for; `stop` says why).
   */
  waitingFor?: 'approval' | 'confirmation' | 'message' | 'budget';
  /** The cost budget stop of a session paused for its budget (also recorded in `session.interrupted.budget`). */
  stop?: CostBudgetStop;
}

/** How long an aborted effect may go on before the runtime abandons it, by default (ReinOptions `abandonGraceMs`). */
export const defaultAbandonGraceMs = 5_000;

export interface SessionHostOptions {
  store: EventStore;
  stream: string;
  tree: MachineTree;
  head: number;
  /** The host clock at `session.created` (epoch ms); `elapsedMs` counts from it. */
  createdAt: number;
  /** The `at` of the stream's last record (default `createdAt`): no record this host appends is stamped earlier. */
  lastAt?: number;
  executors: EffectExecutors;
  machineVersion: string;
  clock?: () => number;
  newId?: () => string;
  /**
   * Save a snapshot once this many records were appended since the last one (0 disables) — and, so that a large tree
   * does not make every step pay for serialising it, once the tail is at least `snapshotTailPerActor` records per actor
   * the last snapshot held.
   */
  snapshotEvery?: number;
  /** How many read-only tool calls of one actor may run at once (writes always run alone). Default 4. */
  parallelTools?: number;
  /**
   * How long an effect may go on after it was aborted (interrupt, cancel, close, the wall-time budget) before it is
   * abandoned (default `defaultAbandonGraceMs`): its executor is told (`EffectContext.abandonGraceMs`: a tool settles
   * `Cancelled`, a model call `cancelled`), and one that still has not returned twice as long plus a second after the abort settles
   * `effect.failed` with `EFFECT_ABANDONED` (dropped when the session was interrupted, cancelled or closed).
   */
  abandonGraceMs?: number;
  lastSnapshotSeq?: number;
  /**
   * Asked right before each effect starts. An error stops the host instead: the effect does not run, nothing more is
   * written, and `whenQuiet` rejects with it (a worker whose lease may have lapsed must not act).
   */
  effectGate?: () => Error | undefined;
  /** The stream's records so far (or its newest ones, reaching the root's last transition), for the status index. */
  statusHistory?: Iterable<StatusSource>;
  /** Derives each round's `capability.diff` from the log (the same deriver replay runs); absent: none are derived. */
  capabilities?: CapabilityDeriver;
  /**
   * Whether a durable record asks to stop the session (a hook's `stopSession`), and why. A batch holding one starts
   * none of its effects, and the session is cancelled with that reason as the next step.
   */
  stopReasonOf?: (record: RecordEnvelope) => string | undefined;
}
