/*
 * The session's effect dispatch: starts the effects a durable step requested (tool calls through each agent's tool
 * lane, the rest at once), runs their executors under the session's deadlines (the wall-time budget, the abandon
 * grace period, the cost-budget pause, the effect gate), and applies each settlement as the session's next step —
 * or drops it when its agent ended or the session was interrupted. Split from session-host.ts (issue 31).
 */
import type { Subject } from 'rxjs';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EffectKind } from '../../models/effect.records.js';
import type { CostBudgetStop } from '../../models/session.records.js';
import type { LiveEvent } from '../../models/live-events.js';
import type { EffectContext, EffectExecutors, EffectRequest, FactDraft, Settlement } from '../effects/effect.js';
import { rootPath } from './root-path.js';
import type { MachineTree } from './machine-tree.js';
import { ReinError } from './host-errors.js';
import { ToolLane } from './tool-lane.js';
import { clearUnrefTimeout } from '../util/unref-timer.js';
import { RunningEffect, RunningEffects } from './running-effects.js';
import type { InputDraft } from './session-host.types.js';

/** A lane's commit of a call that threw: nothing to apply (its failure was the executor's settlement already). */
const settledNothing: Promise<void> = Promise.resolve();

/** Facts of a settlement that say what a call did to the workspace: recorded even when the settlement is dropped. */
const workspaceNoteTypes: ReadonlySet<string> = new Set(['workspace.cleaned', 'workspace.changed']);

/** The request an executor sees for an `effect.requested` record (as `requestsOf` reads it from a step record). */
const requestOf = (record: RecordEnvelope): EffectRequest => {
  const data = record.data as { effectId: string; kind: EffectKind; args: Record<string, unknown> };
  const request: EffectRequest = { effectId: data.effectId, kind: data.kind, actor: record.actor, args: data.args, recordId: record.id };
  if (record.corr) request.corr = record.corr;
  return request;
};

/** Whether the session broke (a write failed) or was interrupted: the host's, read by its runner as fields (no call per read). */
export interface SessionFlags {
  broken: Error | undefined;
  interrupted: boolean;
}

/** What the effect runner needs of its session: its steps and facts, and whether it was interrupted or broke. */
export interface EffectRunnerSession {
  step(input: InputDraft): Promise<RecordEnvelope[]>;
  recordFacts(facts: readonly FactDraft[], options: { actor?: string; cause?: string; sync?: boolean; blobs?: readonly Uint8Array[]; refuse?: () => Error | undefined }): Promise<RecordEnvelope[]>;
  /** The host's flags object itself (it changes them; the runner only reads them). */
  readonly flags: Readonly<SessionFlags>;
  fail(error: unknown): void;
  wakeQuietWaiters(): void;
}

export interface EffectRunnerOptions {
  stream: string;
  tree: MachineTree;
  executors: EffectExecutors;
  /** The session's clock (never runs backwards) and its reading at `session.created`. */
  clock: () => number;
  createdAt: number;
  /** Where effect start/finish progress goes (the host's `live$`). */
  live$: Subject<LiveEvent>;
  parallelTools: number;
  abandonGraceMs: number;
  effectGate: (() => Error | undefined) | undefined;
  session: EffectRunnerSession;
}

/**
 * What an executor gets from the host. A class, not an object literal: a getter in a literal is defined at run time
 * (~1.5 µs each in Node 20), and this is made per effect. The signal is made on its first read: an executor that waits
 * through `aborted` and `onAbort` costs no AbortSignal. `now`, `elapsedMs` and `live` are own properties, made once
 * per session (executors pass them on unbound, `now: context.now`); `recordFacts` and `pause`, which need the
 * request, are methods (no closures per effect).
 */
class HostEffectContext implements EffectContext {
  // `declare`d and set in the constructor: a class field is defined by an initializer function of its own (a call
  // per object) and then assigned again.
  declare readonly sessionId: string;
  declare readonly abandonGraceMs: number;
  declare readonly now: EffectContext['now'];
  declare readonly elapsedMs: EffectContext['elapsedMs'];
  declare readonly live: EffectContext['live'];
  declare private readonly runner: EffectRunner;
  declare private readonly request: EffectRequest;
  declare private readonly effect: RunningEffect;

  constructor(runner: EffectRunner, request: EffectRequest, effect: RunningEffect, shared: SharedContext) {
    this.sessionId = shared.sessionId;
    this.abandonGraceMs = shared.abandonGraceMs;
    this.now = shared.now;
    this.elapsedMs = shared.elapsedMs;
    this.live = shared.live;
    this.runner = runner;
    this.request = request;
    this.effect = effect;
  }

  get signal(): AbortSignal {
    return this.effect.signal;
  }

  get aborted(): boolean {
    return this.effect.aborted;
  }

  onAbort(hook: () => void): () => void {
    return this.effect.addAbortHook(hook);
  }

  recordFacts(facts: readonly FactDraft[], options?: { sync?: boolean; blobs?: Uint8Array[] }): Promise<void> {
    return this.runner.recordEffectFacts(this.request, facts, options);
  }

  pause(stop: CostBudgetStop): void {
    this.runner.pauseFor(this.request, stop);
  }
}

/** The members of every effect's context that do not depend on the effect: made once per session. */
interface SharedContext {
  sessionId: string;
  abandonGraceMs: number;
  now: () => number;
  elapsedMs: () => number;
  live: (event: LiveEvent) => void;
}

const noop = (): void => undefined;

/** Runs one session's effects and hands their settlements back to it as steps. */
export class EffectRunner {
  /** The effects running right now. */
  readonly running = new RunningEffects();
  /** A model call was refused by the cost budget: no model call starts any more, and the session pauses once quiet. */
  pausing: CostBudgetStop | undefined;
  /** Effects of actors that ended or were stopped: aborted, and their settlements dropped. */
  private readonly dropped = new Set<string>();
  /** Effects prepared while their request was being written (`prepare`), by effect id, until started or discarded. */
  private readonly prepared = new Map<string, { request: EffectRequest; prepared: Promise<unknown> }>();
  private readonly toolLanes = new Map<string, ToolLane<{ request: EffectRequest; settlement: Settlement }>>();
  private readonly stream: string;
  private readonly tree: MachineTree;
  private readonly executors: EffectExecutors;
  private readonly clock: () => number;
  private readonly createdAt: number;
  private readonly live$: Subject<LiveEvent>;
  private readonly parallelTools: number;
  private readonly abandonGraceMs: number;
  private readonly effectGate: (() => Error | undefined) | undefined;
  private readonly session: EffectRunnerSession;
  private readonly flags: Readonly<SessionFlags>;
  private readonly shared: SharedContext;

  constructor(options: EffectRunnerOptions) {
    this.stream = options.stream;
    this.tree = options.tree;
    this.executors = options.executors;
    this.clock = options.clock;
    this.createdAt = options.createdAt;
    this.live$ = options.live$;
    this.parallelTools = options.parallelTools;
    this.abandonGraceMs = options.abandonGraceMs;
    this.effectGate = options.effectGate;
    this.session = options.session;
    this.flags = options.session.flags;
    const clock = this.clock;
    const createdAt = this.createdAt;
    const live$ = this.live$;
    this.shared = { sessionId: this.stream, abandonGraceMs: this.abandonGraceMs, now: clock, elapsedMs: () => clock() - createdAt, live: (event) => live$.next(event) };
  }

  /**
   * Start an effect whose request is already durable (after a step, or on resume): `record` is its `effect.requested`
   * (as `requestsOf` reads it from a step record: the step record's id, the intent's actor, corr and data).
   */
  startEffect(record: RecordEnvelope): void {
    const data = record.data as { effectId: string; kind: EffectKind; args: Record<string, unknown> };
    // Interrupted while the step that requested it was being written: it stays requested and unstarted (resume runs it).
    if (this.flags.interrupted || this.running.has(data.effectId)) return;
    const early = this.prepared.get(data.effectId);
    if (early !== undefined) this.prepared.delete(data.effectId);
    const request = early?.request ?? requestOf(record);
    const prepared = early?.prepared;
    const effect = new RunningEffect(request.kind, request.actor);
    this.running.add(request.effectId, effect);
    if (request.kind !== 'executeTool') {
      void this.execute(request, effect, prepared).then((settlement) => this.settle(request, settlement));
      return;
    }
    let lane = this.toolLanes.get(request.actor);
    if (!lane || lane.idle) {
      lane = new ToolLane<{ request: EffectRequest; settlement: Settlement }>(this.parallelTools, (outcome) => (outcome.ok ? this.settle(outcome.value.request, outcome.value.settlement) : settledNothing));
      this.toolLanes.set(request.actor, lane);
    }
    const exclusive = this.executors.executeTool?.isExclusive?.(request) ?? true;
    lane.add(exclusive, () => this.execute(request, effect, prepared).then((settlement) => ({ request, settlement })));
  }

  /** Whether an effect of `requests` has an executor that prepares (see `prepare`). */
  canPrepare(requests: readonly RecordEnvelope[]): boolean {
    for (const record of requests) if (this.executors[(record.data as { kind: EffectKind }).kind]?.prepare !== undefined) return true;
    return false;
  }

  /**
   * Prepare an effect whose request is being written (`EffectExecutor.prepare`: pure CPU, nothing starts): kept for
   * `startEffect`, which hands it to the executor once the request is written, or dropped by `discardPrepared`. An
   * effect already started, or one that would not start (interrupted, a model call while pausing), is not prepared.
   */
  prepare(record: RecordEnvelope): void {
    const data = record.data as { effectId: string; kind: EffectKind };
    const executor = this.executors[data.kind];
    if (executor?.prepare === undefined || this.flags.interrupted || this.running.has(data.effectId) || this.prepared.has(data.effectId)) return;
    if (this.pausing && data.kind === 'callModel') return;
    const request = requestOf(record);
    let prepared: Promise<unknown> | undefined;
    try {
      prepared = executor.prepare(request);
    } catch (error) {
      prepared = Promise.reject(error);
    }
    if (prepared === undefined) return;
    // A preparation that fails is the effect's failure once it runs (as if prepared then), never an unhandled rejection.
    prepared.catch(() => undefined);
    this.prepared.set(request.effectId, { request, prepared });
  }

  /** Drop what was prepared for `requests` and not taken by `startEffect` (a failed write, a stop, an interrupt). */
  discardPrepared(requests: readonly RecordEnvelope[]): void {
    if (this.prepared.size === 0) return;
    for (const record of requests) this.prepared.delete((record.data as { effectId: string }).effectId);
  }

  /**
   * Pause before a model call the cost budget cannot pay for: the call is not made and its settlement never comes (it
   * stays in doubt: a resume makes it, after checking the budget again), no other model call starts, the effects
   * already running finish and are applied, and once nothing runs the pause is recorded as `session.interrupted`
   * with the stop (see `whenQuiet`).
   */
  pauseFor(request: EffectRequest, stop: CostBudgetStop): void {
    this.dropped.add(request.effectId);
    this.pausing ??= stop;
  }

  /**
   * Run an effect's executor; an executor that throws settles as `effect.failed`. Never rejects. Not an async function:
   * one promise per effect, settled by the executor's work or — when it has not returned twice the grace period plus
   * a second after its effect aborted (an executor that ignores its signal and whose own grace handling did not
   * apply) — by an `EFFECT_ABANDONED` failure, so an interrupt, a cancel, a close or a budget never waits for it
   * (what the executor still does is not awaited). The safety net is armed only on an abort, through the effect's
   * hook: no `Promise.race`, `finally` or timer per effect on the step path, where nearly none is aborted.
   */
  private execute(request: EffectRequest, effect: RunningEffect, prepared?: Promise<unknown>): Promise<Settlement> {
    const executor = this.executors[request.kind];
    // Paused for the cost budget: no model call starts (each stays in doubt, and a resume makes it).
    if (this.pausing && request.kind === 'callModel') {
      this.dropped.add(request.effectId);
      return Promise.resolve({ type: 'effect.failed', data: { effectId: request.effectId, error: { code: 'COST_BUDGET_REACHED', message: 'paused for the cost budget' }, elapsedMs: 0 } });
    }
    const refused = this.effectGate?.();
    if (refused) {
      // Not a settlement: the host stops here, and `settle` drops whatever is returned.
      this.session.fail(refused);
      return Promise.resolve({ type: 'effect.failed', data: { effectId: request.effectId, error: { code: 'EFFECT_REFUSED', message: refused.message }, elapsedMs: 0 } });
    }
    // A tool call of an agent stopped since it was requested (it waited in its lane) is not begun at all.
    const stopped = request.kind === 'executeTool' ? this.stoppedAgent(request) : undefined;
    if (stopped) return Promise.resolve({ type: 'effect.failed', data: { effectId: request.effectId, error: { code: stopped.code, message: stopped.message }, elapsedMs: this.clock() - this.createdAt } });
    const started = this.clock();
    const label = request.kind === 'executeTool' && typeof request.args.name === 'string' ? request.args.name : request.kind;
    this.live$.next({ type: 'effect.started', actor: request.actor, effectId: request.effectId, kind: request.kind, label });
    const wallTime = (request.kind === 'executeTool' || request.kind === 'callModel') && request.actor === rootPath ? this.armWallTime(effect) : undefined;
    let work: Promise<Settlement>;
    try {
      if (!executor) throw new ReinError('MACHINE_ERROR', `no executor for effect kind ${request.kind}`);
      work = executor.execute(request, new HostEffectContext(this, request, effect, this.shared), prepared);
    } catch (error) {
      work = Promise.reject(error);
    }
    return new Promise<Settlement>((resolve) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (settlement: Settlement): void => {
        // The first of the work and the safety net settles; the other finds nothing left to do.
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (effect.onAbort === onAbort) effect.onAbort = undefined;
        clearUnrefTimeout(wallTime);
        this.running.markFinished(request.effectId);
        const ok = settlement.type !== 'effect.failed' && settlement.type !== 'model.failed' && settlement.data.status !== 'error';
        this.live$.next({ type: 'effect.finished', actor: request.actor, effectId: request.effectId, kind: request.kind, label, ok, durationMs: this.clock() - started });
        resolve(settlement);
      };
      const onAbort = (): void => {
        timer = setTimeout(() => {
          const message = `${String(request.args.name ?? request.kind)} did not stop within ${this.safetyNetMs} ms of its cancellation and was abandoned`;
          finish({ type: 'effect.failed', data: { effectId: request.effectId, error: { code: 'EFFECT_ABANDONED', message }, elapsedMs: this.clock() - this.createdAt } });
        }, this.safetyNetMs);
      };
      if (effect.aborted) onAbort();
      else effect.onAbort = onAbort;
      work.then(finish, (error: unknown) => finish(this.failureOf(request, error)));
    });
  }

  /** What an executor that threw (or rejected) settles as: `effect.failed` with the error's code and message. */
  private failureOf(request: EffectRequest, error: unknown): Settlement {
    const text = error instanceof Error ? error.message : String(error);
    const raw = (error as { code?: unknown } | undefined)?.code;
    const code = typeof raw === 'string' ? raw : 'EFFECT_FAILED';
    // An errno error's message starts with its code (`EPIPE: broken pipe, …`): recorded once, not twice.
    const message = text.startsWith(`${code}: `) || text.startsWith(`${code}, `) ? text.slice(code.length + 2) : text;
    return { type: 'effect.failed', data: { effectId: request.effectId, error: { code, message }, elapsedMs: this.clock() - this.createdAt } };
  }

  /**
   * What an effect's context records (`EffectContext.recordFacts`): facts of its actor, caused by its request. What a
   * tool call persists before it runs (up to `tool.started`) is written only while its agent runs: a child the join
   * (or its deadline) stopped starts nothing after its stop.
   */
  recordEffectFacts(request: EffectRequest, facts: readonly FactDraft[], options: { sync?: boolean; blobs?: Uint8Array[] } | undefined): Promise<void> {
    const guarded = request.kind === 'executeTool' && options?.sync === true;
    const factOptions: Parameters<EffectRunnerSession['recordFacts']>[1] = { actor: request.actor, cause: request.recordId };
    if (options?.sync !== undefined) factOptions.sync = options.sync;
    if (options?.blobs) factOptions.blobs = options.blobs;
    if (guarded) factOptions.refuse = () => this.stoppedAgent(request);
    const written = this.session.recordFacts(facts, factOptions);
    if (guarded && facts.some((fact) => fact.type === 'tool.started')) return written.then(() => this.running.markStarted(request.effectId));
    return written.then(noop);
  }

  /** When the host itself gives up on an aborted executor: well after the executor's own grace has had its chance. */
  private get safetyNetMs(): number {
    return 2 * this.abandonGraceMs + 1_000;
  }

  /**
   * The root agent's wall-time budget also holds while a tool or a model call runs: when it runs out the tool is
   * aborted (a command and every process it started are killed) and settles as `Cancelled`, recorded like any result,
   * and a model call fails `cancelled`; the step that applies it finds no wall time left and ends the session
   * `budget-exhausted`. One that ignores the abort is abandoned after the grace period (`abandonGraceMs`). Child agents have their own deadline
   * (the delegation's timer).
   */
  private armWallTime(effect: RunningEffect): ReturnType<typeof setTimeout> | undefined {
    const { budgets, startedAtMs } = this.tree.context;
    const remaining = startedAtMs + budgets.maxWallTimeMs - (this.clock() - this.createdAt);
    // setTimeout fires at once for a delay beyond 2^31 - 1 ms (~24.8 days): such a budget needs no timer.
    if (remaining > 2 ** 31 - 1) return undefined;
    // Already spent: the call is cancelled before anything of it runs (and before anyone is asked to approve it).
    if (remaining <= 0) {
      effect.abort(new Error(`the wall-time budget of ${budgets.maxWallTimeMs} ms had run out`));
      return undefined;
    }
    const timer = setTimeout(() => effect.abort(new Error(`the wall-time budget of ${budgets.maxWallTimeMs} ms ran out while it ran`)), Math.max(0, remaining));
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
  private settle(request: EffectRequest, settlement: Settlement): Promise<void> {
    let stepped: Promise<RecordEnvelope[]> | undefined;
    try {
      const started = this.running.started(request.effectId);
      if (!this.flags.broken && !this.tree.done && !this.flags.interrupted && (started || !this.gone(request))) {
        // Waits for the write, not the commit: a tool lane commits parallel calls' settlements in order through here,
        // and waiting for each one's fsync (and the commit gathering delay) held the next one back. Built key by key:
        // a literal of conditional spreads takes V8's slow path on every call.
        const input: InputDraft = { skipIf: () => this.flags.interrupted || (!started && this.gone(request)), trusted: true, written: true, type: settlement.type, data: settlement.data, actor: request.actor, cause: request.recordId };
        const corr = settlement.corr ?? request.corr;
        if (corr) input.corr = corr;
        if (settlement.facts) input.facts = settlement.facts;
        if (settlement.blobs) input.blobs = settlement.blobs;
        stepped = this.session.step(input);
      }
    } catch (error) {
      return this.settleFailed(request, error);
    }
    if (stepped === undefined) return this.notApplied(request, settlement);
    // Not an async function: one reaction per settlement. A step that was skipped (interrupted or ended while it
    // waited in the queue) writes nothing.
    return stepped.then(
      (stored) => (stored.length > 0 ? this.settled(request) : this.notApplied(request, settlement)),
      (error: unknown) => this.settleFailed(request, error),
    );
  }

  /** A settlement that was not applied: what its call did to the workspace is still recorded (unless the session broke). */
  private notApplied(request: EffectRequest, settlement: Settlement): Promise<void> {
    if (this.flags.broken) {
      this.settled(request);
      return settledNothing;
    }
    return this.recordWorkspaceNotes(request, settlement).then(
      () => this.settled(request),
      (error: unknown) => this.settleFailed(request, error),
    );
  }

  private settleFailed(request: EffectRequest, error: unknown): Promise<void> {
    this.session.fail(error);
    this.settled(request);
    return settledNothing;
  }

  /** The effect is no longer running: the session may be quiet. */
  private settled(request: EffectRequest): void {
    this.running.delete(request.effectId);
    this.dropped.delete(request.effectId);
    this.session.wakeQuietWaiters();
  }

  /** The effect's settlement is dropped: its agent ended or was stopped (`dropEffectsOf`). */
  private gone(request: EffectRequest): boolean {
    return this.dropped.has(request.effectId) || !this.tree.isActive(request.actor);
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
    await this.session.recordFacts(notes, { actor: request.actor, cause: request.recordId, ...(blobs ? { blobs } : {}) });
  }

  /** Abort the running effects of actors that ended or were stopped (and of their descendants); drop their settlements. */
  dropEffectsOf(paths: readonly string[]): void {
    // A stopped actor starts no more tool calls: its lane (which keeps its calls' settlements) goes with it, so a
    // delegation's ended children leave nothing behind in the host.
    for (const path of paths) this.toolLanes.delete(path);
    for (const [effectId, effect] of this.running.ownedBy(paths)) {
      this.dropped.add(effectId);
      // An executor that already returned has nothing left to abort: a child ends in the step applying the settlement
      // of its last tool call, and aborting it (an error with its stack per child) cost ~1.5% of a 1,000-child run.
      if (!effect.finished) effect.abort(new ReinError('SESSION_ENDED', `${effect.actor} ended`));
    }
  }
}
