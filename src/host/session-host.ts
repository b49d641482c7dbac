import { Subject } from 'rxjs';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import type { EffectKind } from '../../models/effect.records.js';
import { isRecordType, recordTypes, recordVersion as versionOf } from '../../models/records.js';
import type { CostBudgetStop, SessionOutcome } from '../../models/session.records.js';
import type { Usage } from '../../models/budgets.js';
import type { StateValue } from '../../models/actor.records.js';
import type { EventStore, StoredSnapshot } from '../../stores/event-store.js';
import type { EffectExecutors, EffectRequest, FactDraft, Settlement } from '../effects/effect.js';
import { rootPath } from './root-path.js';
import type { MachineTree } from './machine-tree.js';
import { ReinError } from './host-errors.js';
import type { LiveEvent } from '../../models/live-events.js';
import { createIdGenerator } from './record-ids.js';
import { ToolLane } from './tool-lane.js';
import { derivedViewsOf, requestsOf, stepDataOf, stepRecordType, type DerivedDraft, type FoldedFact } from './step-record.js';
import { foldedFactTypes } from '../../models/step.records.js';
import { RunningEffects } from './running-effects.js';
import { initialStatusState, statusOfState, statusStateOf, type SessionStatusState, type StatusSource } from './session-status.js';
import type { CapabilityDeriver } from '../capabilities/capability-deriver.js';

const stepRecordVersion = versionOf('step.derived');

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

/** Facts of a settlement that say what a call did to the workspace: recorded even when the settlement is dropped. */
const workspaceNoteTypes: ReadonlySet<string> = new Set(['workspace.cleaned', 'workspace.changed']);

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

/** A batch handed to the writer and not yet written. */
interface PendingWrite {
  drafts: RecordDraft[];
  sync: boolean | undefined;
  blobs: readonly Uint8Array[] | undefined;
  resolve: (stored: RecordEnvelope[]) => void;
  reject: (error: unknown) => void;
}

/** At most this many records go into one store append when the writer merges the batches waiting for it. */
const maxMergedRecords = 1_024;

/**
 * Records of tail per actor a snapshot holds before the next one is due. A snapshot's cost grows with the actors it
 * holds (an agent with its turn actor persists to about 4 KB: ~90 µs to serialise and encode), and every run pays it,
 * while the tail is replayed only on a resume. Measured on a delegation of 1,000 child agents (~28 records each): at 4
 * records per actor the snapshots took ~9% of the run's CPU (8 snapshots of up to 1,000 agents); at 16 about a
 * quarter of that, and a resume replays at most 16 records per actor more (about 1 ms per agent).
 */
export const snapshotTailPerActor = 16;

/**
 * Runs one session: the step loop (apply one input → collect every derived record → append them as one atomic,
 * synced batch → only then start the requested effects), the effect runner, and the live subjects hosts subscribe
 * to. All appends go through one queue, so the stream has exactly one writer and seqs never interleave.
 */
export class SessionHost {
  /** Every record once it is acknowledged (durable as the store's mode promises), in seq order. */
  readonly records$ = new Subject<RecordEnvelope>();
  /**
   * Every record as soon as it is written, before it is acknowledged, in seq order: what the session's own views fold,
   * since effects that may be redone (model calls, read-only tools) start before their step is committed.
   */
  readonly written$ = new Subject<RecordEnvelope>();
  /** Ephemeral progress (model deltas, effect start/finish) that is never persisted. */
  readonly live$ = new Subject<LiveEvent>();
  readonly stream: string;

  private readonly store: EventStore;
  private readonly tree: MachineTree;
  private readonly executors: EffectExecutors;
  private readonly clock: () => number;
  private readonly newId: () => string;
  private readonly createdAt: number;
  /** The `at` of the last record appended: record timestamps never go backwards within a stream. */
  private lastAt: number;
  private readonly snapshotEvery: number;
  private readonly machineVersion: string;
  /** The seq of the last record written (the store confirmed the append). */
  private head: number;
  /** The seq of the last record handed to the writer (written, being written, or waiting for the writer). */
  private issuedHead: number;
  /** Batches applied to the tree and waiting for the writer (one store append at a time, in seq order). */
  private pendingWrites: PendingWrite[] = [];
  private writing = false;
  /** Steps whose batch is not written yet or whose effects have not been started yet: the session is not quiet. */
  private settling = 0;
  private lastSnapshotSeq: number;
  private lastSnapshotActors = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private readonly running = new RunningEffects();
  /** Effects of actors that ended or were stopped: aborted, and their settlements dropped. */
  private readonly dropped = new Set<string>();
  private readonly toolLanes = new Map<string, ToolLane<{ request: EffectRequest; settlement: Settlement }>>();
  private readonly parallelTools: number;
  private readonly abandonGraceMs: number;
  private readonly effectGate: (() => Error | undefined) | undefined;
  /** What the stream written so far says about the session's status (for stores that index it). */
  private statusState: SessionStatusState;
  private readonly capabilities: CapabilityDeriver | undefined;
  private readonly stopReasonOf: ((record: RecordEnvelope) => string | undefined) | undefined;
  private broken: Error | undefined;
  private interrupted = false;
  /** A model call was refused by the cost budget: no model call starts any more, and the session pauses once quiet. */
  private pausing: CostBudgetStop | undefined;
  private endedRecord: RecordEnvelope | undefined;
  private quietWaiters: Array<() => void> = [];
  /** Written records not yet acknowledged (the store's `commit` has not covered them), in seq order. */
  private unacknowledged: RecordEnvelope[] = [];
  private acknowledgedHead: number;
  private acknowledgedWaiters: Array<{ seq: number; resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(options: SessionHostOptions) {
    this.store = options.store;
    this.stream = options.stream;
    this.tree = options.tree;
    this.head = options.head;
    this.issuedHead = options.head;
    this.acknowledgedHead = options.head;
    this.createdAt = options.createdAt;
    this.lastAt = options.lastAt ?? options.createdAt;
    this.executors = options.executors;
    this.machineVersion = options.machineVersion;
    // The host's clock never runs backwards (a wall clock stepped back by NTP would make elapsed times negative):
    // it starts at the stream's last stamp and only moves forward.
    const wall = options.clock ?? Date.now;
    let latest = options.lastAt ?? options.createdAt;
    this.clock = () => (latest = Math.max(latest, wall()));
    this.newId = options.newId ?? createIdGenerator();
    this.snapshotEvery = options.snapshotEvery ?? 0;
    this.lastSnapshotSeq = options.lastSnapshotSeq ?? 0;
    this.parallelTools = options.parallelTools ?? 4;
    this.abandonGraceMs = options.abandonGraceMs ?? defaultAbandonGraceMs;
    this.effectGate = options.effectGate;
    this.statusState = statusStateOf(options.statusHistory ?? [], initialStatusState);
    this.capabilities = options.capabilities;
    this.stopReasonOf = options.stopReasonOf;
  }

  get headSeq(): number {
    return this.head;
  }

  get isDone(): boolean {
    return this.tree.done;
  }

  /** Nothing is queued, unwritten, unacknowledged or running (not even a timer): the session only waits for someone. */
  get idle(): boolean {
    return this.queued === 0 && this.settling === 0 && this.running.ids().length === 0 && this.acknowledgedHead >= this.issuedHead && !this.broken;
  }

  /** The root agent's current state value and context. */
  snapshot(): { value: StateValue; usage: Usage; head: number } {
    return { value: this.tree.value, usage: this.tree.context.usage, head: this.head };
  }

  /** The approval questions the session is waiting on. */
  pendingApprovals(): ReturnType<MachineTree['pendingApprovals']> {
    return this.tree.pendingApprovals();
  }

  /** The XState persisted snapshot of the whole actor tree. */
  persisted(): unknown {
    return this.tree.persisted();
  }

  /** The effects running right now, by id. */
  runningEffects(): string[] {
    return this.running.ids();
  }

  /**
   * Apply one input: validate it, deliver it to its actor, append it with every derived record as one batch, then
   * start the effects that batch requested. Rejects with `INPUT_INVALID` (nothing written) for malformed data.
   */
  step(input: InputDraft): Promise<RecordEnvelope[]> {
    const schema = isRecordType(input.type) ? recordTypes[input.type] : undefined;
    if (!schema || schema.class !== 'input') return Promise.reject(new ReinError('INPUT_INVALID', `${input.type} is not an input record type`));
    let data = input.data;
    if (input.trusted !== true) {
      const parsed = schema.data.safeParse(input.data);
      if (!parsed.success) return Promise.reject(new ReinError('INPUT_INVALID', `${input.type}: ${parsed.error.message}`, { cause: parsed.error }));
      data = parsed.data as Record<string, unknown>;
    }
    // The queue applies steps one after another; a step's batch is handed to the writer and the next step is applied
    // while it is written (the writer merges the batches waiting for it into one append). Effects start only once
    // their own batch is written, acknowledgements wait for the store's commit as before.
    const outcome = this.enqueue(async (): Promise<{ written: Promise<RecordEnvelope[]> } | { refused: Error }> => {
      if (this.tree.done && input.refuseWhenEnded) return { refused: new ReinError('SESSION_ENDED', `session ${this.stream} has ended (${String(this.tree.value)}): the message was not delivered; start a session or fork this one to go on`) };
      if (this.tree.done) return { written: Promise.resolve([]) };
      // A settlement queued before an interrupt is dropped like one arriving after it (its effect stays in doubt).
      if (input.skipIf?.()) return { written: Promise.resolve([]) };
      // Refused, not thrown: a thrown error would break the host, and a resumable session is not broken.
      if (this.interrupted) return { refused: new ReinError('SESSION_ENDED', `session ${this.stream} was interrupted: the message was not delivered; resume it to continue`) };
      const refused = input.precondition?.();
      if (refused) return { refused };
      const at = this.clock();
      const record: RecordDraft = { id: this.newId(), type: input.type, v: versionOf(input.type), at, actor: input.actor ?? rootPath, data, ...(input.cause ? { cause: input.cause } : {}), ...(input.corr ? { corr: input.corr } : {}) };
      const machineDrafts = this.tree.apply(record);
      const derived = this.capabilities ? this.capabilities.derive(record, machineDrafts, () => this.tree.mcpConnections()) : machineDrafts;
      // The settlement's facts that belong to the step (its model attempt and context, a read-only tool's start) are
      // folded into the step record; the others keep records of their own, before the input.
      const folded: FoldedFact[] = [];
      const separate: FactDraft[] = [];
      for (const fact of input.facts ?? []) {
        if (foldedFactTypes.has(fact.type)) folded.push({ type: fact.type, data: fact.data as Record<string, unknown>, at: Math.max(fact.at ?? at, this.lastAt), ...(fact.corr ? { corr: fact.corr } : {}) });
        else separate.push(fact);
      }
      const drafts: RecordDraft[] = separate.length > 0 ? this.factDrafts(separate, at, input.actor, input.cause) : [];
      drafts.push(record);
      drafts.push({ id: this.newId(), type: stepRecordType, v: stepRecordVersion, at, actor: record.actor, cause: record.id, data: stepDataOf(derived as DerivedDraft[], folded, at) });
      const stopped = this.tree.drainStopped();
      const done = this.tree.done;
      // The store's durability decides (synced per step by default, group-committed when relaxed).
      const written = this.append(drafts, undefined, input.blobs);
      // Taken now, while the tree is exactly at the batch's last seq; saved once that batch is written.
      const snapshot = this.snapshotDue();
      this.settling++;
      const started = written
        .then(async (stored) => {
          if (snapshot) await this.store.saveSnapshot(this.stream, snapshot);
          if (stopped.length > 0) this.dropEffectsOf(stopped);
          // A hook stopped the session: nothing this batch requested starts; the cancellation is queued next.
          if (!this.stopIfAsked(stored)) for (const entry of stored) if (entry.type === stepRecordType) for (const request of requestsOf(entry)) this.startEffect(request);
          if (done) this.finish(stored);
          return stored;
        })
        .finally(() => {
          this.settling--;
          this.wakeQuietWaiters();
        });
      // A failed write or snapshot breaks the host (nothing after it is written); the step's caller gets the error.
      started.catch((error: unknown) => this.fail(error));
      return { written: started };
    });
    return outcome.then(async (result) => {
      if ('refused' in result) throw result.refused;
      const stored = await result.written;
      if (stored.length > 0 && input.written !== true) await this.acknowledged(stored[stored.length - 1]!.seq);
      return stored;
    });
  }

  /** Append runtime facts (not machine output) as one batch in the same queue as steps. */
  async recordFacts(facts: readonly FactDraft[], options: { actor?: string; cause?: string; sync?: boolean; blobs?: readonly Uint8Array[]; refuse?: () => Error | undefined } = {}): Promise<RecordEnvelope[]> {
    const outcome = await this.enqueue(async (): Promise<{ written: Promise<RecordEnvelope[]> } | { refused: Error }> => {
      // Checked in queue order, against the tree as the steps before it left it; a refusal is the caller's error, not
      // the host's (a work item that throws breaks the host).
      const refused = options.refuse?.();
      if (refused) return { refused };
      const pending = this.append(this.factDrafts(facts, this.clock(), options.actor, options.cause), options.sync, options.blobs);
      this.settling++;
      const settled = pending
        .then((stored) => {
          this.stopIfAsked(stored);
          return stored;
        })
        .finally(() => {
          this.settling--;
          this.wakeQuietWaiters();
        });
      settled.catch((error: unknown) => this.fail(error));
      return { written: settled };
    });
    if ('refused' in outcome) throw outcome.refused;
    const stored = await outcome.written;
    // `sync: false` (a model call's attempt facts): written is enough; the commit of the step after them covers them.
    if (stored.length > 0 && options.sync !== false) await this.acknowledged(stored[stored.length - 1]!.seq);
    return stored;
  }

  /** Queue the session's cancellation when a record of `stored` (just written) asks to stop it (and it has not ended). */
  private stopIfAsked(stored: readonly RecordEnvelope[]): boolean {
    if (!this.stopReasonOf || this.tree.done || this.interrupted) return false;
    let reason: string | undefined;
    for (const record of stored) reason ??= this.stopReasonOf(record);
    if (reason === undefined) return false;
    this.cancel(reason).catch(() => undefined);
    return true;
  }

  private factDrafts(facts: readonly FactDraft[], at: number, actor: string | undefined, cause: string | undefined): RecordDraft[] {
    return facts.map((fact): RecordDraft => ({ id: this.newId(), v: versionOf(fact.type), at, actor: actor ?? rootPath, ...(cause ? { cause } : {}), ...fact }));
  }

  /**
   * Start an effect whose request is already durable (after a step, or on resume): `record` is its `effect.requested`
   * (as `requestsOf` reads it from a step record: the step record's id, the intent's actor, corr and data).
   */
  startEffect(record: RecordEnvelope): void {
    const data = record.data as { effectId: string; kind: EffectKind; args: Record<string, unknown> };
    // Interrupted while the step that requested it was being written: it stays requested and unstarted (resume runs it).
    if (this.interrupted || this.running.has(data.effectId)) return;
    const request: EffectRequest = { effectId: data.effectId, kind: data.kind, actor: record.actor, args: data.args, recordId: record.id, ...(record.corr ? { corr: record.corr } : {}) };
    const controller = new AbortController();
    this.running.add(request.effectId, { controller, kind: request.kind, actor: request.actor });
    if (request.kind !== 'executeTool') {
      void this.execute(request, controller).then((settlement) => this.settle(request, settlement));
      return;
    }
    let lane = this.toolLanes.get(request.actor);
    if (!lane || lane.idle) {
      lane = new ToolLane<{ request: EffectRequest; settlement: Settlement }>(this.parallelTools, async (outcome) => {
        if (outcome.ok) await this.settle(outcome.value.request, outcome.value.settlement);
      });
      this.toolLanes.set(request.actor, lane);
    }
    const exclusive = this.executors.executeTool?.isExclusive?.(request) ?? true;
    lane.add(exclusive, async () => ({ request, settlement: await this.execute(request, controller) }));
  }

  /** Cancel the session: the machine moves to `cancelled` and every running effect is aborted. */
  async cancel(reason: string): Promise<void> {
    if (this.tree.done) return;
    await this.step({ type: 'session.cancelled', data: { reason } });
  }

  /**
   * Stop without ending the session: abort running effects and drop their settlements, so they stay in doubt and
   * `resume` resolves them by policy. Records `session.interrupted`.
   */
  async interrupt(reason: string, budget?: CostBudgetStop): Promise<void> {
    if (this.interrupted || this.tree.done) return;
    this.interrupted = true;
    const running = this.running.ids();
    for (const effect of this.running.values()) effect.controller.abort(new ReinError('SESSION_ENDED', `interrupted: ${reason}`));
    await this.recordFacts([{ type: 'session.interrupted', data: { reason, running, ...(budget ? { budget } : {}) } }]);
  }

  /**
   * Pause before a model call the cost budget cannot pay for: the call is not made and its settlement never comes (it
   * stays in doubt: a resume makes it, after checking the budget again), no other model call starts, the effects
   * already running finish and are applied, and once nothing runs the pause is recorded as `session.interrupted`
   * with the stop (see `whenQuiet`).
   */
  private pauseFor(request: EffectRequest, stop: CostBudgetStop): void {
    this.dropped.add(request.effectId);
    this.pausing ??= stop;
  }

  /** Why the session paused for its cost budget, as a person reads it. */
  private pauseReason(stop: CostBudgetStop): string {
    const usd = (value: number | undefined) => (value === undefined ? 'unknown' : `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`);
    const why = stop.worstCaseUsd === undefined || stop.spentUsd === undefined
      ? `the cost budget of ${usd(stop.limitUsd)} cannot be checked: ${stop.model ?? 'the model'} has no price`
      : `the cost budget of ${usd(stop.limitUsd)} could be exceeded: spent ${usd(stop.spentUsd)}${stop.reservedUsd > 0 ? `, calls under way up to ${usd(stop.reservedUsd)}` : ''}, this call up to ${usd(stop.worstCaseUsd)}`;
    return `paused before a model call of ${stop.actor}: ${why}; rein resume ${this.stream} --max-cost <usd> continues it`;
  }

  /**
   * Resolves when nothing is queued and no effect is running: the session either ended (`done`) or waits for
   * someone (`paused`: an approval, a confirmation, or a new message).
   */
  whenQuiet(): Promise<SessionResult> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.broken) return reject(this.broken);
        if (this.queued > 0 || this.settling > 0 || this.running.busy > 0 || this.acknowledgedHead < this.issuedHead) return this.quietWaiters.push(check);
        // Paused for the cost budget and nothing runs any more: the pause is recorded now, then the session is quiet.
        if (this.pausing && !this.interrupted && !this.tree.done) return void this.interrupt(this.pauseReason(this.pausing), this.pausing).then(check, reject);
        resolve(this.result());
      };
      check();
    });
  }

  /** The session's result as of now. */
  result(): SessionResult {
    const context = this.tree.context;
    const ended = this.endedRecord?.data as { status: SessionOutcome; reason?: string; output?: unknown; outputErrors?: string[] } | undefined;
    const tally = this.tree.done ? context.tally : undefined;
    const answer = ended ? ('output' in ended ? { output: ended.output } : {}) : tally?.answer ? { output: tally.answer.value } : {};
    const outputErrors = ended?.outputErrors ?? tally?.outputErrors;
    // A pause for the cost budget is recorded as an interruption (resumable the same way) and reported as a pause.
    const budgetPause = !ended && !this.tree.done && this.interrupted ? this.pausing : undefined;
    const status = ended?.status ?? (this.tree.done ? (context.outcome ?? 'failed') : budgetPause ? 'paused' : this.interrupted ? 'interrupted' : 'paused');
    const waiting = status === 'paused' ? statusOfState(this.statusState) : undefined;
    const waitingFor = budgetPause ? 'budget' : this.tree.pendingApprovals().length > 0 || waiting === 'awaiting-approval' ? 'approval' : waiting === 'awaiting-confirmation' ? 'confirmation' : waiting === 'idle' ? 'message' : undefined;
    return {
      sessionId: this.stream,
      ...(status === 'paused' && waitingFor ? { waitingFor } : {}),
      // A session rebuilt after it ended (resume of an ended session) has no `session.ended` from this process: its
      // final state says how it ended.
      status,
      ...(budgetPause ? { reason: this.pauseReason(budgetPause), stop: budgetPause } : ended?.reason ?? context.endReason ? { reason: ended?.reason ?? context.endReason ?? undefined } : {}),
      head: this.head,
      ...answer,
      ...(outputErrors ? { outputErrors } : {}),
      // The machine counts a turn when it requests the model call (its turn budget); a call still unanswered (the
      // session was stopped, cancelled or paused before the model replied) is a turn that never ran.
      // The whole tree's: the turns and tool calls of delegated children count as the session's (their tokens already do).
      usage: ((usage) => (context.awaitingModel === null ? usage : { ...usage, turns: Math.max(0, usage.turns - 1) }))({
        ...context.usage,
        turns: context.usage.turns + (context.tally?.delegated?.turns ?? 0),
        toolCalls: context.usage.toolCalls + (context.tally?.delegated?.toolCalls ?? 0),
      }),
    };
  }

  /** Run an effect's executor; an executor that throws settles as `effect.failed`. Never rejects. */
  private async execute(request: EffectRequest, controller: AbortController): Promise<Settlement> {
    const executor = this.executors[request.kind];
    // Paused for the cost budget: no model call starts (each stays in doubt, and a resume makes it).
    if (this.pausing && request.kind === 'callModel') {
      this.dropped.add(request.effectId);
      return { type: 'effect.failed', data: { effectId: request.effectId, error: { code: 'COST_BUDGET_REACHED', message: 'paused for the cost budget' }, elapsedMs: 0 } };
    }
    const refused = this.effectGate?.();
    if (refused) {
      // Not a settlement: the host stops here, and `settle` drops whatever is returned.
      this.fail(refused);
      return { type: 'effect.failed', data: { effectId: request.effectId, error: { code: 'EFFECT_REFUSED', message: refused.message }, elapsedMs: 0 } };
    }
    // A tool call of an agent stopped since it was requested (it waited in its lane) is not begun at all.
    const stopped = request.kind === 'executeTool' ? this.stoppedAgent(request) : undefined;
    if (stopped) return { type: 'effect.failed', data: { effectId: request.effectId, error: { code: stopped.code, message: stopped.message }, elapsedMs: this.clock() - this.createdAt } };
    const started = this.clock();
    const label = request.kind === 'executeTool' && typeof request.args.name === 'string' ? request.args.name : request.kind;
    this.live$.next({ type: 'effect.started', actor: request.actor, effectId: request.effectId, kind: request.kind, label });
    const wallTime = (request.kind === 'executeTool' || request.kind === 'callModel') && request.actor === rootPath ? this.armWallTime(controller) : undefined;
    let settlement: Settlement;
    try {
      if (!executor) throw new ReinError('MACHINE_ERROR', `no executor for effect kind ${request.kind}`);
      settlement = await this.abandoning(request, controller.signal, executor.execute(request, {
        sessionId: this.stream,
        signal: controller.signal,
        abandonGraceMs: this.abandonGraceMs,
        recordFacts: async (facts, options) => {
          // What a tool call persists before it runs (up to `tool.started`) is written only while its agent runs: a
          // child the join (or its deadline) stopped starts nothing after its stop.
          const guarded = request.kind === 'executeTool' && options?.sync === true;
          await this.recordFacts(facts, {
            actor: request.actor,
            cause: request.recordId,
            ...(options?.sync === undefined ? {} : { sync: options.sync }),
            ...(options?.blobs ? { blobs: options.blobs } : {}),
            ...(guarded ? { refuse: () => this.stoppedAgent(request) } : {}),
          });
          if (guarded && facts.some((fact) => fact.type === 'tool.started')) this.running.markStarted(request.effectId);
        },
        live: (event) => this.live$.next(event),
        pause: (stop) => this.pauseFor(request, stop),
        now: () => this.clock(),
        elapsedMs: () => this.clock() - this.createdAt,
      }));
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      const raw = (error as { code?: unknown }).code;
      const code = typeof raw === 'string' ? raw : 'EFFECT_FAILED';
      // An errno error's message starts with its code (`EPIPE: broken pipe, …`): recorded once, not twice.
      const message = text.startsWith(`${code}: `) || text.startsWith(`${code}, `) ? text.slice(code.length + 2) : text;
      settlement = { type: 'effect.failed', data: { effectId: request.effectId, error: { code, message }, elapsedMs: this.clock() - this.createdAt } };
    }
    clearTimeout(wallTime);
    this.running.markFinished(request.effectId);
    const ok = settlement.type !== 'effect.failed' && settlement.type !== 'model.failed' && settlement.data.status !== 'error';
    this.live$.next({ type: 'effect.finished', actor: request.actor, effectId: request.effectId, kind: request.kind, label, ok, durationMs: this.clock() - started });
    return settlement;
  }

  /**
   * The executor's settlement, or — when it has not returned twice the grace period plus a second after its signal aborted (an
   * executor that ignores its signal and whose own grace handling did not apply) — an `EFFECT_ABANDONED` failure, so
   * an interrupt, a cancel, a close or a budget never waits for it. What the executor still does is not awaited.
   */
  /** When the host itself gives up on an aborted executor: well after the executor's own grace has had its chance. */
  private get safetyNetMs(): number {
    return 2 * this.abandonGraceMs + 1_000;
  }

  private abandoning(request: EffectRequest, signal: AbortSignal, work: Promise<Settlement>): Promise<Settlement> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const abandoned = new Promise<Settlement>((resolve) => {
      onAbort = () => {
        timer = setTimeout(() => {
          const message = `${String(request.args.name ?? request.kind)} did not stop within ${this.safetyNetMs} ms of its cancellation and was abandoned`;
          resolve({ type: 'effect.failed', data: { effectId: request.effectId, error: { code: 'EFFECT_ABANDONED', message }, elapsedMs: this.clock() - this.createdAt } });
        }, this.safetyNetMs);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([work, abandoned]).finally(() => {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    });
  }

  /**
   * The root agent's wall-time budget also holds while a tool or a model call runs: when it runs out the tool is
   * aborted (a command and every process it started are killed) and settles as `Cancelled`, recorded like any result,
   * and a model call fails `cancelled`; the step that applies it finds no wall time left and ends the session
   * `budget-exhausted`. One that ignores the abort is abandoned after the grace period (`abandonGraceMs`). Child agents have their own deadline
   * (the delegation's timer).
   */
  private armWallTime(controller: AbortController): ReturnType<typeof setTimeout> | undefined {
    const { budgets, startedAtMs } = this.tree.context;
    const remaining = startedAtMs + budgets.maxWallTimeMs - (this.clock() - this.createdAt);
    // setTimeout fires at once for a delay beyond 2^31 - 1 ms (~24.8 days): such a budget needs no timer.
    if (remaining > 2 ** 31 - 1) return undefined;
    // Already spent: the call is cancelled before anything of it runs (and before anyone is asked to approve it).
    if (remaining <= 0) {
      controller.abort(new Error(`the wall-time budget of ${budgets.maxWallTimeMs} ms had run out`));
      return undefined;
    }
    const timer = setTimeout(() => controller.abort(new Error(`the wall-time budget of ${budgets.maxWallTimeMs} ms ran out while it ran`)), Math.max(0, remaining));
    timer.unref();
    return timer;
  }

  /** `SESSION_ENDED` when the agent that requested this effect has ended or was stopped (in the tree as applied so far). */
  private stoppedAgent(request: EffectRequest): ReinError | undefined {
    return this.tree.isActive(request.actor) ? undefined : new ReinError('SESSION_ENDED', `${request.actor} ended: its ${String(request.args.name ?? request.kind)} call was not started`);
  }

  /**
   * Apply an effect's settlement as the next step (unless the session ended or was interrupted meanwhile). The
   * settlement of an agent that ended or was stopped is dropped — except a tool call's whose `tool.started` is
   * durable: every started call gets its end on the record (the machine, whose agent is gone, takes no step on it).
   */
  private async settle(request: EffectRequest, settlement: Settlement): Promise<void> {
    try {
      const started = this.running.started(request.effectId);
      const gone = () => this.dropped.has(request.effectId) || !this.tree.isActive(request.actor);
      let applied = false;
      if (!this.broken && !this.tree.done && !this.interrupted && (started || !gone())) {
        // Waits for the write, not the commit: a tool lane commits parallel calls' settlements in order through here,
        // and waiting for each one's fsync (and the commit gathering delay) held the next one back.
        const stored = await this.step({
          skipIf: () => this.interrupted || (!started && gone()),
          trusted: true,
          written: true,
          type: settlement.type,
          data: settlement.data,
          actor: request.actor,
          cause: request.recordId,
          ...(settlement.corr ?? request.corr ? { corr: settlement.corr ?? request.corr } : {}),
          ...(settlement.facts ? { facts: settlement.facts } : {}),
          ...(settlement.blobs ? { blobs: settlement.blobs } : {}),
        });
        // A step that was skipped (interrupted or ended while it waited in the queue) writes nothing.
        applied = stored.length > 0;
      }
      if (!applied && !this.broken) await this.recordWorkspaceNotes(request, settlement);
    } catch (error) {
      this.fail(error);
    } finally {
      this.running.delete(request.effectId);
      this.dropped.delete(request.effectId);
      this.wakeQuietWaiters();
    }
  }

  /**
   * A dropped settlement (the session was interrupted or ended, or its agent stopped, while the call ran) stays in
   * doubt, but what the call did to the workspace is not: a protected path its own check removed, the changes its
   * window captured. Those notes are recorded on their own, as facts, so the log says every change rein made — the
   * session's end-of-interrupt check would otherwise find the path already gone and record nothing.
   */
  private async recordWorkspaceNotes(request: EffectRequest, settlement: Settlement): Promise<void> {
    const notes = (settlement.facts ?? []).filter((fact) => workspaceNoteTypes.has(fact.type));
    if (notes.length === 0) return;
    const blobs = notes.some((fact) => fact.type === 'workspace.changed') ? settlement.blobs : undefined;
    await this.recordFacts(notes, { actor: request.actor, cause: request.recordId, ...(blobs ? { blobs } : {}) });
  }

  /**
   * Resolves once nothing runs any more — the effects an interrupt aborted have returned and their settlements were
   * dropped (their workspace notes recorded) — or after the abandon grace period, whichever comes first. Never rejects.
   */
  stopped(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.abandonGraceMs);
      timer.unref?.();
      this.whenQuiet().then(
        () => resolve(),
        () => resolve(),
      ).finally(() => clearTimeout(timer));
    });
  }

  /** Abort the running effects of actors that ended or were stopped (and of their descendants); drop their settlements. */
  private dropEffectsOf(paths: readonly string[]): void {
    // A stopped actor starts no more tool calls: its lane (which keeps its calls' settlements) goes with it, so a
    // delegation's ended children leave nothing behind in the host.
    for (const path of paths) this.toolLanes.delete(path);
    for (const [effectId, effect] of this.running.ownedBy(paths)) {
      this.dropped.add(effectId);
      // An executor that already returned has nothing left to abort: a child ends in the step applying the settlement
      // of its last tool call, and aborting it (an error with its stack per child) cost ~1.5% of a 1,000-child run.
      if (!effect.finished) effect.controller.abort(new ReinError('SESSION_ENDED', `${effect.actor} ended`));
    }
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    if (this.broken) return Promise.reject(this.broken);
    this.queued++;
    const next = this.chain.then(async () => {
      if (this.broken) throw this.broken;
      return work();
    });
    this.chain = next.then(
      () => this.settleQueued(),
      (error: unknown) => {
        this.fail(error);
        this.settleQueued();
      },
    );
    return next;
  }

  private settleQueued(): void {
    this.queued--;
    this.wakeQuietWaiters();
  }

  /**
   * Hand a batch to the writer; resolves with its stored records once written, after they went to `written$`.
   * `sync: true` forces an fsync (a mutating tool's intent) and acknowledges at once. Otherwise, with a store that
   * group-commits (`commit`), the batch is written without sync and acknowledged — `records$`, and the step's promise —
   * once the store's commit covers it, so the effects it requested can start meanwhile; a store without `commit`
   * decides by its mode and acknowledges when the append resolves. Seqs are assigned now, in call order.
   */
  private append(drafts: RecordDraft[], sync: boolean | undefined, blobs?: readonly Uint8Array[]): Promise<RecordEnvelope[]> {
    if (drafts.length === 0) return Promise.resolve([]);
    // A fact stamped when its tool decided something may be appended after a later batch (parallel tools), and a
    // wall clock may step back: `at` is clamped so the stream's timestamps never go backwards.
    for (const draft of drafts) {
      if (draft.at < this.lastAt) draft.at = this.lastAt;
      else this.lastAt = draft.at;
    }
    this.issuedHead += drafts.length;
    return new Promise<RecordEnvelope[]>((resolve, reject) => {
      this.pendingWrites.push({ drafts, sync, blobs, resolve, reject });
      this.pumpWrites();
    });
  }

  /**
   * The writer: one store append at a time, in seq order. The batches that waited meanwhile (steps applied while the
   * previous append was written) go into one append — an atomic batch holding several whole steps, so a crash still
   * leaves a prefix of steps — as long as they ask for the same durability.
   */
  private pumpWrites(): void {
    if (this.writing || this.pendingWrites.length === 0) return;
    if (this.broken) {
      const failed = this.pendingWrites.splice(0);
      for (const pending of failed) pending.reject(this.broken);
      return;
    }
    const first = this.pendingWrites[0]!;
    let count = 1;
    let records = first.drafts.length;
    while (count < this.pendingWrites.length) {
      const next = this.pendingWrites[count]!;
      if (next.sync !== first.sync || records + next.drafts.length > maxMergedRecords) break;
      records += next.drafts.length;
      count++;
    }
    const group = this.pendingWrites.splice(0, count);
    const drafts = group.length === 1 ? first.drafts : group.flatMap((pending) => pending.drafts);
    const blobs = group.flatMap((pending) => pending.blobs ?? []);
    const sync = first.sync;
    const grouped = sync !== true && this.store.commit !== undefined;
    // The status the whole stream leaves after this batch (a batch alone cannot tell: a resume's confirmation wait
    // outlives the transitions written after it). Folded over the merged batch: the same as folding its steps in turn.
    const statusState = statusStateOf(drafts, this.statusState);
    const status = statusOfState(statusState);
    this.writing = true;
    this.store
      .append(this.stream, drafts, { expectedSeq: this.head, ...(grouped ? { sync: false } : sync === undefined ? {} : { sync }), ...(blobs.length > 0 ? { blobs } : {}), ...(status === undefined ? {} : { status }) })
      .then(
        (stored) => {
          this.writing = false;
          if (stored.length !== drafts.length) throw new ReinError('MACHINE_ERROR', `the store wrote ${stored.length} of ${drafts.length} records`);
          this.statusState = statusState;
          this.head = stored[stored.length - 1]!.seq;
          for (const record of stored) {
            this.unacknowledged.push(record);
            this.written$.next(record);
          }
          const head = this.head;
          if (!grouped) this.acknowledge(head);
          else {
            this.store.commit!(this.stream, head).then(
              () => this.acknowledge(head),
              (error: unknown) => this.fail(error),
            );
          }
          let offset = 0;
          for (const pending of group) {
            pending.resolve(stored.slice(offset, offset + pending.drafts.length));
            offset += pending.drafts.length;
          }
          this.pumpWrites();
        },
      )
      .catch((error: unknown) => {
        this.writing = false;
        this.fail(error);
        for (const pending of group) pending.reject(error);
        this.pumpWrites();
      });
  }

  /** Everything up to `seq` is committed: publish it on `records$` (in seq order) and release who waits for it. */
  private acknowledge(seq: number): void {
    if (seq <= this.acknowledgedHead) return;
    this.acknowledgedHead = seq;
    let count = 0;
    while (count < this.unacknowledged.length && this.unacknowledged[count]!.seq <= seq) count++;
    const published = this.unacknowledged.splice(0, count);
    for (const record of published) this.records$.next(record);
    const waiters = this.acknowledgedWaiters;
    this.acknowledgedWaiters = [];
    for (const waiter of waiters) {
      if (waiter.seq <= seq) waiter.resolve();
      else this.acknowledgedWaiters.push(waiter);
    }
    this.wakeQuietWaiters();
  }

  /** Resolves once the records up to `seq` are acknowledged; rejects when the session broke first. */
  private acknowledged(seq: number): Promise<void> {
    if (seq <= this.acknowledgedHead) return Promise.resolve();
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => this.acknowledgedWaiters.push({ seq, resolve, reject }));
  }

  /**
   * The snapshot due after the batch just handed to the writer, taken now (the tree is exactly at `issuedHead`), or
   * undefined. See `snapshotEvery`: a snapshot's cost grows with the tree, so the tail it waits for grows with it
   * (amortised O(1) per record).
   */
  private snapshotDue(): StoredSnapshot | undefined {
    const tail = this.issuedHead - this.lastSnapshotSeq;
    if (this.snapshotEvery <= 0 || tail < this.snapshotEvery || tail < this.lastSnapshotActors * snapshotTailPerActor) return undefined;
    this.lastSnapshotSeq = this.issuedHead;
    this.lastSnapshotActors = this.tree.actorCount();
    return { seq: this.issuedHead, version: this.machineVersion, at: this.clock(), data: this.tree.persisted() };
  }

  private finish(stored: readonly RecordEnvelope[]): void {
    for (const record of stored) {
      if (record.type !== stepRecordType) continue;
      for (const entry of derivedViewsOf(record)) if (entry.type === 'session.ended' && entry.actor === rootPath) this.endedRecord = entry;
    }
    for (const effect of this.running.values()) effect.controller.abort(new ReinError('SESSION_ENDED', 'the session ended'));
  }

  private fail(error: unknown): void {
    if (this.broken) return;
    this.broken = error instanceof Error ? error : new Error(String(error));
    for (const effect of this.running.values()) effect.controller.abort(this.broken);
    const waiters = this.acknowledgedWaiters;
    this.acknowledgedWaiters = [];
    for (const waiter of waiters) waiter.reject(this.broken);
    this.wakeQuietWaiters();
  }

  private wakeQuietWaiters(): void {
    if (this.queued > 0 || (!this.broken && (this.settling > 0 || this.running.busy > 0 || this.acknowledgedHead < this.issuedHead))) return;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
