/*
 * The session host: the step loop (apply one input, append its records as one batch, then start the effects it
 * requested), the session's lifecycle (cancel, interrupt, the cost-budget pause, quiet and result) and its snapshots.
 * Its writer (session-writer.ts) and its effect runner (effect-runner.ts) are classes of their own.
 */
import { Subject } from 'rxjs';
import type { RecordDraft, RecordEnvelope } from '../../models/envelope.js';
import { isRecordType, recordTypes, recordVersion as versionOf } from '../../models/records.js';
import type { CostBudgetStop } from '../../models/session.records.js';
import type { Usage } from '../../models/budgets.js';
import type { StateValue } from '../../models/actor.records.js';
import type { EventStore, StoredSnapshot } from '../../stores/event-store.js';
import type { FactDraft } from '../effects/effect.js';
import { rootPath } from './root-path.js';
import type { MachineTree } from './machine-tree.js';
import { ReinError } from './host-errors.js';
import type { LiveEvent } from '../../models/live-events.js';
import { createIdGenerator } from './record-ids.js';
import { derivedViewsOf, requestsOf, stepDataOf, stepRecordType, type DerivedDraft, type FoldedFact } from './step-record.js';
import { foldedFactTypes } from '../../models/step.records.js';
import type { RunningEffects } from './running-effects.js';
import { initialStatusState, statusStateOf, type SessionStatusState, type StatusSource } from './session-status.js';
import { usageOf } from '../projections/usage-summary.js';
import type { CapabilityDeriver } from '../capabilities/capability-deriver.js';
import { defaultAbandonGraceMs, type InputDraft, type SessionHostOptions, type SessionResult } from './session-host.types.js';
import { SessionWriter } from './session-writer.js';
import { storedInput } from './shared-call-specs.js';
import { EffectRunner, type SessionFlags } from './effect-runner.js';
import { pauseReasonOf, sessionResultOf } from './session-result.js';

export { defaultAbandonGraceMs, type InputDraft, type SessionHostOptions, type SessionResult } from './session-host.types.js';

const stepRecordVersion = versionOf('step.derived');

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
/** The effects a written batch asks for (its step records' intents, in order); a loop, not a `flatMap`: this runs every step. */
const requestsIn = (stored: readonly RecordEnvelope[]): RecordEnvelope[] => {
  let requests: RecordEnvelope[] | undefined;
  for (const record of stored) {
    if (record.type !== stepRecordType) continue;
    const asked = requestsOf(record);
    if (asked.length > 0) requests = requests === undefined ? asked : requests.concat(asked);
  }
  return requests ?? [];
};

/** What a step's written batch still has to do: start the effects it asked for (or hand them over), end the session. */
interface WrittenStep {
  input: InputDraft;
  requests: RecordEnvelope[];
  /** Its effects' preparation while the batch is written (`prepareWhileWriting`), when one was armed. */
  preparing: { due: boolean } | undefined;
  /** Actors the step stopped: their running effects are aborted once it is written. */
  stopped: readonly string[];
  /** The session ended with this step. */
  done: boolean;
}

export class SessionHost {
  /** Every record once it is acknowledged (durable as the store's mode promises), in seq order. */
  readonly records$ = new Subject<RecordEnvelope>();
  /**
   * Every record as soon as it is written, before it is acknowledged, in seq order: what the session's own views fold,
   * since effects that may be redone (model calls, read-only tools) start before their step is committed.
   */
  readonly written$ = new Subject<RecordEnvelope>();
  /**
   * Every record once handed to the writer, before it is written, in seq order: what the session's own views fold
   * (context, tool state, budget). A step's records are published here once its batch's write is under way, so the
   * effects it asked for are prepared (pure CPU: a model call's input) while the write runs; at the latest when the
   * batch is written. A record here may still fail to be written: the session then breaks and nothing prepared from
   * it is used. Not durable: a reader that needs durable records reads `records$` (or `written$`, written only).
   */
  readonly issued$ = new Subject<RecordEnvelope>();
  /** Ephemeral progress (model deltas, effect start/finish) that is never persisted. */
  readonly live$ = new Subject<LiveEvent>();
  readonly stream: string;

  private readonly store: EventStore;
  private readonly tree: MachineTree;
  private readonly clock: () => number;
  private readonly newId: () => string;
  private readonly createdAt: number;
  private readonly snapshotEvery: number;
  private readonly machineVersion: string;
  /** The one queue every batch of records goes through to the store. */
  private readonly writer: SessionWriter;
  /** Starts the effects steps request and applies their settlements as steps. */
  private readonly effects: EffectRunner;
  /** The effects running right now (the runner's). */
  private readonly running: RunningEffects;
  /** Steps whose batch is not written yet or whose effects have not been started yet: the session is not quiet. */
  private settling = 0;
  private lastSnapshotSeq: number;
  private lastSnapshotActors = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private readonly abandonGraceMs: number;
  private readonly capabilities: CapabilityDeriver | undefined;
  private readonly stopReasonOf: ((record: RecordEnvelope) => string | undefined) | undefined;
  /** Broken (a write failed: nothing more is written) and interrupted: one object its effect runner reads too (no call per read). */
  private readonly flags: SessionFlags = { broken: undefined, interrupted: false };
  private endedRecord: RecordEnvelope | undefined;
  private quietWaiters: Array<() => void> = [];
  /** The CallSpec members this host stored whole in its stream (`storedInput`). */
  private readonly storedSpecs = new Set<string>();

  constructor(options: SessionHostOptions) {
    this.store = options.store;
    this.stream = options.stream;
    this.tree = options.tree;
    this.createdAt = options.createdAt;
    this.machineVersion = options.machineVersion;
    // The host's clock never runs backwards (a wall clock stepped back by NTP would make elapsed times negative):
    // it starts at the stream's last stamp and only moves forward.
    const wall = options.clock ?? Date.now;
    let latest = options.lastAt ?? options.createdAt;
    this.clock = () => (latest = Math.max(latest, wall()));
    this.newId = options.newId ?? createIdGenerator();
    this.snapshotEvery = options.snapshotEvery ?? 0;
    this.lastSnapshotSeq = options.lastSnapshotSeq ?? 0;
    this.abandonGraceMs = options.abandonGraceMs ?? defaultAbandonGraceMs;
    this.capabilities = options.capabilities;
    this.stopReasonOf = options.stopReasonOf;
    // Bound methods, not arrow functions around them: a call through them is one JavaScript call, not two.
    const session = {
      broken: () => this.flags.broken,
      interrupted: () => this.flags.interrupted,
      fail: this.fail.bind(this),
      wakeQuietWaiters: this.wakeQuietWaiters.bind(this),
    };
    const history = Array.isArray(options.statusHistory) ? (options.statusHistory as readonly StatusSource[]) : [...(options.statusHistory ?? [])];
    this.writer = new SessionWriter({
      store: this.store,
      stream: this.stream,
      head: options.head,
      lastAt: options.lastAt ?? options.createdAt,
      statusState: statusStateOf(history, initialStatusState),
      usage: usageOf(history),
      records$: this.records$,
      written$: this.written$,
      issued$: this.issued$,
      host: session,
    });
    this.effects = new EffectRunner({
      stream: this.stream,
      tree: this.tree,
      executors: options.executors,
      clock: this.clock,
      createdAt: this.createdAt,
      live$: this.live$,
      parallelTools: options.parallelTools ?? 4,
      abandonGraceMs: this.abandonGraceMs,
      effectGate: options.effectGate,
      session: { flags: this.flags, fail: session.fail, wakeQuietWaiters: session.wakeQuietWaiters, step: this.step.bind(this), recordFacts: this.recordFacts.bind(this) },
    });
    this.running = this.effects.running;
  }

  /** The seq of the last record written (the store confirmed the append). */
  private get head(): number {
    return this.writer.head;
  }

  /** The seq of the last record handed to the writer (written, being written, or waiting for the writer). */
  private get issuedHead(): number {
    return this.writer.issuedHead;
  }

  /** The seq of the last record acknowledged (the store's commit covers it). */
  private get acknowledgedHead(): number {
    return this.writer.acknowledgedHead;
  }

  /** The `at` of the last record appended: record timestamps never go backwards within a stream. */
  private get lastAt(): number {
    return this.writer.lastAt;
  }

  /** What the stream written so far says about the session's status (for stores that index it). */
  private get statusState(): SessionStatusState {
    return this.writer.statusState;
  }


  /** A model call was refused by the cost budget: no model call starts any more, and the session pauses once quiet. */
  private get pausing(): CostBudgetStop | undefined {
    return this.effects.pausing;
  }

  get headSeq(): number {
    return this.head;
  }

  get isDone(): boolean {
    return this.tree.done;
  }

  /** Nothing is queued, unwritten, unacknowledged or running (not even a timer): the session only waits for someone. */
  get idle(): boolean {
    return this.queued === 0 && this.settling === 0 && this.running.ids().length === 0 && this.acknowledgedHead >= this.issuedHead && !this.flags.broken;
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
    const outcome = this.enqueue((): { written: Promise<RecordEnvelope[]> } | { refused: Error } => {
      if (this.tree.done && input.refuseWhenEnded) return { refused: new ReinError('SESSION_ENDED', `session ${this.stream} has ended (${String(this.tree.value)}): the message was not delivered; start a session or fork this one to go on`) };
      // An ended session takes no more inputs, but for the raise of a spent budget (the machine decides whether it applies).
      if (this.tree.done && input.type !== 'session.budgets-raised') return { written: Promise.resolve([]) };
      // A settlement queued before an interrupt is dropped like one arriving after it (its effect stays in doubt).
      if (input.skipIf?.()) return { written: Promise.resolve([]) };
      // Refused, not thrown: a thrown error would break the host, and a resumable session is not broken.
      if (this.flags.interrupted) return { refused: new ReinError('SESSION_ENDED', `session ${this.stream} was interrupted: the message was not delivered; resume it to continue`) };
      const refused = input.precondition?.();
      if (refused) return { refused };
      const at = this.clock();
      const record: RecordDraft = { id: this.newId(), type: input.type, v: versionOf(input.type), at, actor: input.actor ?? rootPath, data };
      if (input.cause) record.cause = input.cause;
      if (input.corr) record.corr = input.corr;
      const machineDrafts = this.tree.apply(record);
      const derived = this.capabilities ? this.capabilities.derive(record, machineDrafts, () => this.tree.mcpConnections()) : machineDrafts;
      // The settlement's facts that belong to the step (its model attempt and context, a read-only tool's start) are
      // folded into the step record; the others keep records of their own, before the input.
      const folded: FoldedFact[] = [];
      const separate: FactDraft[] = [];
      if (input.facts !== undefined && input.facts.length > 0) {
        const lastAt = this.lastAt;
        for (const fact of input.facts) {
          if (!foldedFactTypes.has(fact.type)) {
            separate.push(fact);
            continue;
          }
          // Built key by key: a literal ending in a conditional spread takes V8's slow path on every call.
          const entry: FoldedFact = { type: fact.type, data: fact.data as Record<string, unknown>, at: Math.max(fact.at ?? at, lastAt) };
          if (fact.corr) entry.corr = fact.corr;
          folded.push(entry);
        }
      }
      const drafts: RecordDraft[] = separate.length > 0 ? this.factDrafts(separate, at, input.actor, input.cause) : [];
      drafts.push(storedInput(record, this.storedSpecs));
      drafts.push({ id: this.newId(), type: stepRecordType, v: stepRecordVersion, at, actor: record.actor, cause: record.id, data: stepDataOf(derived as DerivedDraft[], folded, at) });
      const stopped = this.tree.drainStopped();
      const done = this.tree.done;
      // The store's durability decides (synced per step by default, group-committed when relaxed).
      const issued = this.writer.issue(drafts, undefined, input.blobs);
      // The effects the step asks for, read from its step record as the store will return it (seqs assigned at issue).
      const requests = requestsIn(issued.envelopes);
      // While the batch is written, the effects it asked for are prepared (pure CPU; none starts before it is written).
      const preparing = requests.length > 0 && input.holdEffects === undefined ? this.prepareWhileWriting(requests) : undefined;
      // Taken now, while the tree is exactly at the batch's last seq; saved once that batch is written.
      const snapshot = this.snapshotEvery > 0 ? this.snapshotDue() : undefined;
      this.settling++;
      // One reaction per step (no async callback, `finally` or `catch` of its own): what the written batch starts, or
      // the failure that breaks the host (a failed write or snapshot; the step's caller gets the error).
      const step: WrittenStep = { input, requests, preparing, stopped, done };
      const started = issued.written.then(
        (stored) => (snapshot ? this.savedSnapshot(snapshot, stored, step) : this.afterWritten(stored, step)),
        (error: unknown) => this.stepFailed(error, step),
      );
      return { written: started };
    });
    return outcome.then((result) => {
      if ('refused' in result) throw result.refused;
      if (input.written === true) return result.written;
      return result.written.then((stored) => (stored.length > 0 ? this.acknowledged(stored[stored.length - 1]!.seq).then(() => stored) : stored));
    });
  }

  /** A step's batch is written (and its snapshot saved): start the effects it asked for, unless a hook stopped the session. */
  private afterWritten(stored: RecordEnvelope[], step: WrittenStep): RecordEnvelope[] {
    try {
      // Written: from here each effect prepares as it runs (a store that wrote before the preparation began).
      if (step.preparing) step.preparing.due = false;
      if (step.stopped.length > 0) this.dropEffectsOf(step.stopped);
      // A hook stopped the session: nothing this batch requested starts; the cancellation is queued next.
      if (!this.stopIfAsked(stored)) {
        if (step.input.holdEffects) step.input.holdEffects(step.requests);
        else for (const request of step.requests) this.effects.startEffect(request);
      }
      if (step.done) this.finish(stored);
    } catch (error) {
      return this.stepFailed(error, step);
    }
    this.stepSettled(step);
    return stored;
  }

  /** The snapshot taken with a step is saved once its batch is written, before the step's effects start. */
  private savedSnapshot(snapshot: StoredSnapshot, stored: RecordEnvelope[], step: WrittenStep): Promise<RecordEnvelope[]> {
    if (step.preparing) step.preparing.due = false;
    return this.store.saveSnapshot(this.stream, snapshot).then(
      () => this.afterWritten(stored, step),
      (error: unknown) => this.stepFailed(error, step),
    );
  }

  /** A failed write or snapshot breaks the host (nothing after it is written); rethrown for the step's caller. */
  private stepFailed(error: unknown, step: WrittenStep): never {
    this.fail(error);
    this.stepSettled(step);
    throw error;
  }

  /** The step no longer keeps the session busy; what was prepared and not started (a failed write, a stop, an interrupt) is dropped, never used. */
  private stepSettled(step: WrittenStep): void {
    if (step.preparing) {
      step.preparing.due = false;
      this.effects.discardPrepared(step.requests);
    }
    this.settling--;
    this.wakeQuietWaiters();
  }

  /** Append runtime facts (not machine output) as one batch in the same queue as steps. */
  async recordFacts(facts: readonly FactDraft[], options: { actor?: string; cause?: string; sync?: boolean; blobs?: readonly Uint8Array[]; refuse?: () => Error | undefined } = {}): Promise<RecordEnvelope[]> {
    const outcome = await this.enqueue((): { written: Promise<RecordEnvelope[]> } | { refused: Error } => {
      // Checked in queue order, against the tree as the steps before it left it; a refusal is the caller's error, not
      // the host's (a work item that throws breaks the host).
      const refused = options.refuse?.();
      if (refused) return { refused };
      const pending = this.append(this.factDrafts(facts, this.clock(), options.actor, options.cause), options.sync, options.blobs);
      this.settling++;
      const settled = pending.then(
        (stored) => {
          try {
            this.stopIfAsked(stored);
          } catch (error) {
            this.fail(error);
            this.factsSettled();
            throw error;
          }
          this.factsSettled();
          return stored;
        },
        (error: unknown) => {
          this.fail(error);
          this.factsSettled();
          throw error;
        },
      );
      return { written: settled };
    });
    if ('refused' in outcome) throw outcome.refused;
    const stored = await outcome.written;
    // `sync: false` (a model call's attempt facts): written is enough; the commit of the step after them covers them.
    if (stored.length > 0 && options.sync !== false) await this.acknowledged(stored[stored.length - 1]!.seq);
    return stored;
  }

  private factsSettled(): void {
    this.settling--;
    this.wakeQuietWaiters();
  }

  /**
   * Start an effect whose request is already durable (after a step, or on resume): `record` is its `effect.requested`
   * (as `requestsOf` reads it from a step record: the step record's id, the intent's actor, corr and data).
   */
  startEffect(record: RecordEnvelope): void {
    this.effects.startEffect(record);
  }

  /**
   * Prepare the effects a step asked for while its batch is written: once the write is under way (the next turn of
   * the event loop, after the store's encoding has handed the batch to its writer thread), the records issued so far
   * are folded into the session's views and each effect whose executor can prepare (a model call's input) does.
   * Nothing starts here: each effect starts once its batch is written, with what was prepared. Once the batch is
   * written (`due` false: a store that wrote before the preparation's turn came, like the memory store) or failed, no
   * preparation begins: the effects prepare as they run.
   */
  private prepareWhileWriting(requests: readonly RecordEnvelope[]): { due: boolean } | undefined {
    if (!this.effects.canPrepare(requests)) return undefined;
    const preparing = { due: true };
    setImmediate(() => {
      if (!preparing.due || this.flags.broken || this.flags.interrupted) return;
      this.writer.foldIssued();
      for (const request of requests) this.effects.prepare(request);
    });
    return preparing;
  }

  /** Abort the running effects of actors that ended or were stopped (and of their descendants); drop their settlements. */
  private dropEffectsOf(paths: readonly string[]): void {
    this.effects.dropEffectsOf(paths);
  }

  /** Hand a batch to the writer (see `SessionWriter.append`). */
  private append(drafts: RecordDraft[], sync: boolean | undefined, blobs?: readonly Uint8Array[]): Promise<RecordEnvelope[]> {
    return this.writer.append(drafts, sync, blobs);
  }

  /** Resolves once the records up to `seq` are acknowledged; rejects when the session broke first. */
  private acknowledged(seq: number): Promise<void> {
    return this.writer.acknowledged(seq);
  }

  /** Queue the session's cancellation when a record of `stored` (just written) asks to stop it (and it has not ended). */
  private stopIfAsked(stored: readonly RecordEnvelope[]): boolean {
    if (!this.stopReasonOf || this.tree.done || this.flags.interrupted) return false;
    let reason: string | undefined;
    for (const record of stored) reason ??= this.stopReasonOf(record);
    if (reason === undefined) return false;
    this.cancel(reason).catch(() => undefined);
    return true;
  }

  private factDrafts(facts: readonly FactDraft[], at: number, actor: string | undefined, cause: string | undefined): RecordDraft[] {
    return facts.map((fact): RecordDraft => ({ id: this.newId(), v: versionOf(fact.type), at, actor: actor ?? rootPath, ...(cause ? { cause } : {}), ...fact }));
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
    if (this.flags.interrupted || this.tree.done) return;
    this.flags.interrupted = true;
    const running = this.running.ids();
    for (const effect of this.running.values()) effect.abort(new ReinError('SESSION_ENDED', `interrupted: ${reason}`));
    await this.recordFacts([{ type: 'session.interrupted', data: { reason, running, ...(budget ? { budget } : {}) } }]);
  }

  /**
   * Resolves when nothing is queued and no effect is running: the session either ended (`done`) or waits for
   * someone (`paused`: an approval, a confirmation, or a new message).
   */
  whenQuiet(): Promise<SessionResult> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.flags.broken) return reject(this.flags.broken);
        if (this.queued > 0 || this.settling > 0 || this.running.busy > 0 || this.acknowledgedHead < this.issuedHead) return this.quietWaiters.push(check);
        // Paused for the cost budget and nothing runs any more: the pause is recorded now, then the session is quiet.
        if (this.pausing && !this.flags.interrupted && !this.tree.done) return void this.interrupt(pauseReasonOf(this.pausing, this.stream), this.pausing).then(check, reject);
        resolve(this.result());
      };
      check();
    });
  }

  /** The session's result as of now. */
  result(): SessionResult {
    return sessionResultOf({ stream: this.stream, head: this.head, tree: this.tree, endedRecord: this.endedRecord, interrupted: this.flags.interrupted, pausing: this.pausing, statusState: this.statusState });
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

  /**
   * Queue `work` (synchronous: it applies a step or hands facts to the writer) after everything queued before it. One
   * promise per item: the queue is the chain of these promises, each run whether the one before it was fulfilled or
   * not (an item that throws breaks the host; its caller gets the error).
   */
  private enqueue<T>(work: () => T): Promise<T> {
    if (this.flags.broken) return Promise.reject(this.flags.broken);
    this.queued++;
    const run = (): T => this.runQueued(work);
    const next = this.chain.then(run, run);
    this.chain = next;
    return next;
  }

  private runQueued<T>(work: () => T): T {
    try {
      if (this.flags.broken) throw this.flags.broken;
      return work();
    } catch (error) {
      this.fail(error);
      throw error;
    } finally {
      this.settleQueued();
    }
  }

  private settleQueued(): void {
    this.queued--;
    this.wakeQuietWaiters();
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
    for (const effect of this.running.values()) effect.abort(new ReinError('SESSION_ENDED', 'the session ended'));
  }

  private fail(error: unknown): void {
    if (this.flags.broken) return;
    this.flags.broken = error instanceof Error ? error : new Error(String(error));
    for (const effect of this.running.values()) effect.abort(this.flags.broken);
    this.writer.rejectWaiters(this.flags.broken);
    this.wakeQuietWaiters();
  }

  private wakeQuietWaiters(): void {
    if (this.queued > 0 || (!this.flags.broken && (this.settling > 0 || this.running.busy > 0 || this.acknowledgedHead < this.issuedHead))) return;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
