import type { FactDraft } from '../../models/envelope.js';
import { combineLatest, defer, EMPTY, filter, firstValueFrom, map, Observable as ObservableOf, of, ReplaySubject, takeUntil, takeWhile, type Observable } from 'rxjs';
import { ApprovalDecision, type ApprovalRequested } from '../../models/permission.records.js';
import type { ReinRecord } from '../../models/records.js';
import type { StateValue } from '../../models/actor.records.js';
import type { Usage } from '../../models/budgets.js';
import type { EventStore } from '../../stores/event-store.js';
import type { LiveEvent } from '../../models/live-events.js';
import { OutputError, ReinError } from '../host/host-errors.js';
import type { SessionHost, SessionResult } from '../host/session-host.js';
import { contextProjection, type ContextView, type ContextViewOptions } from '../projections/context.view.js';
import { memoryProjection, type MemoryView } from '../projections/memory.view.js';
import { currentView } from '../projections/projection.js';
import { traceProjection, type TraceView } from '../projections/trace.view.js';
import type { SessionMemory } from '../memory/session-memory.js';
import type { SessionCapabilities } from '../capabilities/session-capabilities.js';
import type { SessionHooks } from '../hooks/session-hooks.js';
import { PluginError } from '../plugins/plugin-errors.js';
import type { BackgroundStop } from '../tools/process-runner.js';
import { processArea } from '../areas/process-loader.js';
import type { WorkspaceCapture } from '../changes/workspace-capture.js';
import { diffSession, type DiffOptions, type SessionDiff } from '../changes/session-diff.js';
import type { PermissionRule } from '../policy/permission-rules.js';
import { unmatchedRuleFacts } from '../policy/unmatched-rules.js';
import { sessionEndedIn } from '../host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { listen } from '../host/record-taps.js';
import type { Unsubscribable } from 'rxjs';

/** A session's memory views: its own candidate ledger, and the workspace's governance stream (store records). */
export interface MemoryViews {
  session: MemoryView;
  governance: MemoryView;
}

/**
 * A call waiting for a person: what it is, why it needs approval, the rule `allow for session` would grant, and
 * the path of the agent that asked (`root`, or a child agent such as `root/delegation-3/tests`).
 */
export type ApprovalRequest = Omit<ApprovalRequested, 'elapsedMs'> & { actor?: string };

/** A person's answer to an approval request. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  /** For a denial: why, or what to do instead — the model reads it. */
  feedback?: string;
}

/**
 * A running session as a host app or the CLI holds it. Every method goes through the step loop, so whatever it
 * changes is in the log before anything acts on it.
 */
/**
 * The session's records as `records$` gives them while it runs, to a listener of this process's own (the registry):
 * a tap on the host's records (record-taps.ts), without the public stream's rxjs layers. Not on the public door.
 */
export const listenToRecords = (session: ReinSession, listener: (record: RecordEnvelope) => void): Unsubscribable => listen(session['host'].records$, listener);

export class ReinSession<Output = unknown> {
  private views: { context?: Observable<ContextView>; trace?: Observable<TraceView>; memory?: Observable<MemoryViews> } = {};

  constructor(
    private readonly host: SessionHost,
    private readonly store: EventStore,
    private readonly viewOptions: { contextView?: ContextViewOptions; memory?: SessionMemory; hooks?: SessionHooks; capabilities?: SessionCapabilities; hold?: () => Promise<void>; rules?: readonly PermissionRule[]; capture?: WorkspaceCapture } = {},
  ) {
    const capabilities = viewOptions.capabilities;
    // The session's MCP connections end with it (its end is in the log; closing them records nothing more).
    // Its background commands are stopped and waited for, then the protected paths are checked again (one of them
    // may have created one after its call's own check); the store's hold of its stream ends after that: a long-lived
    // harness keeps no ended session pinned open (or locked).
    const hold = viewOptions.hold;
    // One subscriber for both (each record is looked at once).
    listen(host.records$, (record) => {
      if (!sessionEndedIn(record)) return;
      if (capabilities) void capabilities.close();
      if (this.ending) return;
      this.ending = this.endBackground().finally(() => hold?.().catch(() => undefined));
      // Once the end's own work is written and every subscriber has it, the session's observables complete.
      void this.ending
        .then(() => this.whenQuiet())
        .catch(() => undefined)
        .finally(() => this.finishObservables());
    });
  }

  /** Emits (and replays to late subscribers) once the session ended and is quiet, or was released: its observables complete. */
  private readonly finished$ = new ReplaySubject<void>(1);

  /** The head when the session's observables completed: a later subscriber of a stored view gets up to it, then completion. */
  private finalHead: number | undefined;

  /**
   * `source` until the session's observables complete; once they have, a new subscriber gets what is stored up to the
   * final head (history, the current view) and then completion.
   */
  private bounded<T>(source: () => Observable<T>, seqOf: (value: T) => number, from = 1): Observable<T> {
    return defer(() => {
      const head = this.finalHead;
      if (head !== undefined) return from > head ? EMPTY : source().pipe(takeWhile((value) => seqOf(value) < head, true));
      // Subscribed while the session runs: it completes once the session's observables finish and everything up to
      // the final head has been handed on — a subscriber still reading history when the session ends (a summary
      // read right after `whenQuiet`) is not cut short.
      return new ObservableOf<T>((subscriber) => {
        let last = from - 1;
        const done = (): boolean => this.finalHead !== undefined && last >= this.finalHead;
        const inner = source().subscribe({
          next: (value) => {
            last = seqOf(value);
            subscriber.next(value);
            if (done()) subscriber.complete();
          },
          error: (error: unknown) => subscriber.error(error),
          complete: () => subscriber.complete(),
        });
        const finished = this.finished$.subscribe(() => {
          if (done()) subscriber.complete();
        });
        return () => {
          inner.unsubscribe();
          finished.unsubscribe();
        };
      });
    });
  }

  private finishObservables(): void {
    if (this.finalHead !== undefined) return;
    this.finalHead = this.host.snapshot().head;
    this.finished$.next();
    this.finished$.complete();
  }

  /** The work of the session's end that outlives `session.ended`: background commands stopped, the workspace checked. */
  private ending: Promise<void> | undefined;

  /** Whether the permission rules were checked against the session's MCP tools (on the first message). */
  private rulesChecked = false;

  private async endBackground(reason: BackgroundStop = 'session-end'): Promise<void> {
    const { endBackgroundCommands, cleanAfterBackground } = await processArea();
    await endBackgroundCommands(this.id, reason);
    const removed = await cleanAfterBackground(this.id);
    // Recorded after the end, as a `sessionEnd` hook's facts are: what rein removed is in the log.
    if (removed.length > 0) await this.host.recordFacts([{ type: 'workspace.cleaned', data: { paths: removed, reason: 'protected-path-created' } }]).catch(() => undefined);
    // What changed in the workspace since the last call (its background commands, its hooks) is recorded last.
    const capture = this.viewOptions.capture;
    if (capture) {
      const flushed = await capture.flush().catch(() => ({ facts: [], blobs: [] }));
      if (flushed.facts.length > 0) await this.host.recordFacts(flushed.facts, { blobs: flushed.blobs }).catch(() => undefined);
      capture.close();
    }
  }

  get id(): string {
    return this.host.stream;
  }

  /**
   * Records as they become durable, typed by their `type` (`if (record.type === 'tool.settled')` narrows `data`).
   * Live only: what was appended before you subscribed is not replayed — use `records(1)` for history too.
   */
  get records$(): Observable<ReinRecord> {
    return (this.host.records$.asObservable() as Observable<ReinRecord>).pipe(takeUntil(this.finished$));
  }

  /**
   * Ephemeral progress: model text and reasoning deltas, tool-call argument progress, retries, fallbacks, effect
   * start, progress and finish. Never persisted and never replayed: to miss none of it, create the session paused
   * (`rein.createSession`), subscribe, then `send` the task — `startSession` sends at once.
   */
  get live$(): Observable<LiveEvent> {
    return this.host.live$.pipe(takeUntil(this.finished$));
  }

  /**
   * The context view (per actor: goal, user messages and constraints, recent turns, evidence, state), live and shared:
   * a subscriber gets the current view first (the log folded at once, not every intermediate view), then one view per
   * appended record. `projectModelInput` renders it into what the model sees next. `contextView()` is its current value.
   */
  get context$(): Observable<ContextView> {
    const view = (this.views.context ??= currentView(this.store, this.id, contextProjection(this.viewOptions.contextView)));
    return this.bounded(() => view, (current) => current.seq);
  }

  /**
   * The trace view (turns linked to their context, reply, tool calls, permissions, results, verifications), live: the
   * current view first, then one per appended record. `traceView()` is its current value.
   */
  get trace$(): Observable<TraceView> {
    const view = (this.views.trace ??= currentView(this.store, this.id, traceProjection));
    return this.bounded(() => view, (current) => current.seq);
  }

  /**
   * The memory views, live: this session's candidate ledger (folded from its `memory.*` records) and the
   * workspace's governance stream (submitted candidates, reviews, store records) as this process last read or wrote
   * it. Without memory the governance view stays empty. The current views first, then the live ones; `memoryView()` is
   * the current value. Their maps (`candidates`, `records`) are read with `mapValues` / `mapGet` and serialise
   * (`JSON.stringify`) as plain objects by id.
   */
  get memory$(): Observable<MemoryViews> {
    const governance$ = this.viewOptions.memory?.governance.view$ ?? of(memoryProjection.initial());
    const view = (this.views.memory ??= combineLatest({ session: currentView(this.store, this.id, memoryProjection), governance: governance$ }));
    return this.bounded(() => view, (current) => current.session.seq);
  }

  /** The current context view: the latest the shared `context$` holds, else the log folded now (nothing is kept live for it). */
  contextView(): Promise<ContextView> {
    return firstValueFrom(this.context$);
  }

  /** The current trace view: the latest the shared `trace$` holds, else the log folded now. */
  traceView(): Promise<TraceView> {
    return firstValueFrom(this.trace$);
  }

  /** The current memory views (`{ session, governance }`): the latest `memory$` holds, else the log folded now. */
  memoryView(): Promise<MemoryViews> {
    return firstValueFrom(this.memory$);
  }

  /**
   * Every record from `from` on, typed by its `type`: history first, then live appends, with no gap and no
   * duplicate — `records(1)` never misses the first records, however late you subscribe.
   */
  records(from = 1): Observable<ReinRecord> {
    return this.bounded(() => this.store.tail(this.id, from) as Observable<ReinRecord>, (record) => record.seq, from);
  }

  /**
   * What this session changed in the workspace so far (docs/replay.md: *Time travel*): every `workspace.changed` in log order,
   * one step's (`at`), one call's (`call`), or with `net` its net change. Read from the store; changes nothing.
   */
  diff(options: DiffOptions = {}): Promise<SessionDiff> {
    return diffSession(this.store, this.id, options);
  }

  /** The approval requests the session and its child agents are waiting on right now (restored from the log after a restart). */
  pendingApprovals(): ApprovalRequest[] {
    return this.host.pendingApprovals().map((pending) => ({ ...pending }));
  }

  /** New approval requests as they become durable (use `pendingApprovals()` for those already waiting). */
  get approvals$(): Observable<ApprovalRequest> {
    return this.host.records$.pipe(
      takeUntil(this.finished$),
      filter((record) => record.type === 'approval.requested'),
      map((record) => {
        const { elapsedMs: _elapsed, ...request } = record.data as ApprovalRequested;
        return { ...request, actor: record.actor };
      }),
    );
  }

  /**
   * Answer an approval request: `allow-once` runs the call, `allow-session` also grants its suggested rule for the
   * rest of the session, `deny` gives the model a `Denied` observation (with `feedback`). Deny rules and the
   * workspace boundary still hold after an allow. Rejects with `APPROVAL_NOT_FOUND` (nothing written) when the
   * request is not pending, and `INPUT_INVALID` for a bad decision.
   */
  async approve(approvalId: string, answer: ApprovalAnswer): Promise<void> {
    const decision = ApprovalDecision.safeParse(answer?.decision);
    if (!decision.success) throw new ReinError('INPUT_INVALID', `decision must be allow-once, allow-session or deny, got ${JSON.stringify(answer?.decision)}`);
    const pending = () => this.host.pendingApprovals().find((request) => request.approvalId === approvalId);
    const request = pending();
    if (!request) throw new ReinError('APPROVAL_NOT_FOUND', `no pending approval ${approvalId} in session ${this.id}`);
    const feedback = typeof answer.feedback === 'string' && answer.feedback.trim() !== '' ? answer.feedback.trim().slice(0, 2_000) : undefined;
    await this.host.step({
      type: 'approval.replied',
      actor: approvalId,
      data: { approvalId, decision: decision.data, ...(feedback ? { feedback } : {}), ...(decision.data === 'allow-session' ? { rule: request.suggestedRule ?? request.tool } : {}) },
      precondition: () => (pending() ? undefined : new ReinError('APPROVAL_NOT_FOUND', `approval ${approvalId} is no longer pending: it was answered, or the agent that asked was stopped (a join decided without it)`)),
    });
  }

  /**
   * Send a user message (the task, or a follow-up while the session runs). The first waits until the session's MCP
   * servers are ready or have failed, so the first round's visible set knows them.
   */
  async send(text: string): Promise<void> {
    // A blank message would reach the model as a turn of nothing: refused before anything is written.
    if (typeof text !== 'string' || text.trim() === '') throw new ReinError('INPUT_INVALID', `a message must be a non-blank string, got ${JSON.stringify(text) ?? String(text)}`);
    // A message to an ended session is refused, not dropped: nothing would ever answer it.
    if (this.host.isDone) throw new ReinError('SESSION_ENDED', `session ${this.id} has ended (${this.host.result().status}): the message was not delivered; start a session or fork this one to go on`);
    const reviewed = await this.viewOptions.hooks?.promptSubmitted(text);
    if (reviewed?.blocked !== undefined) {
      // The refusal is on record; the message never reaches the model.
      await this.host.recordFacts(reviewed.facts);
      throw new PluginError('PROMPT_BLOCKED', `a userPromptSubmit hook blocked the message: ${reviewed.blocked}`);
    }
    const capabilities = this.viewOptions.capabilities;
    await capabilities?.ready();
    // Once the servers are up, a deny or ask rule for MCP tools that names none of them is said (it guards nothing).
    const rules = this.viewOptions.rules;
    if (rules && capabilities && !this.rulesChecked) {
      this.rulesChecked = true;
      const facts = unmatchedRuleFacts(rules, capabilities.registry.names());
      if (facts.length > 0) await this.host.recordFacts(facts);
    }
    await this.host.step({ type: 'user.message', data: { text }, refuseWhenEnded: true, ...(reviewed && reviewed.facts.length > 0 ? { facts: reviewed.facts } : {}) });
  }

  /**
   * Let go of the session's resources in this process (its MCP connections and their processes) without recording
   * anything: a paused session stays resumable. The CLI calls it before it exits; a session that ends does it itself
   * (its MCP connections). The store's hold of the session's stream (`EventStore.hold`) ends here too, and the store
   * lets go of the stream (`EventStore.release`): another process may resume the session at once.
   */
  async release(): Promise<void> {
    // A paused session's background commands would die with this process unchecked: stop them now and check the
    // protected paths again (a command may have planted `.mcp.json` or a skill after its call's own check).
    this.ending ??= this.endBackground('paused');
    await this.ending;
    await this.viewOptions.capabilities?.close();
    await this.viewOptions.hold?.();
    // Every subscriber gets what is durable, then the session's observables complete.
    await this.store.delivered?.(this.id, this.host.snapshot().head).catch(() => undefined);
    this.finishObservables();
    // The store lets go of the stream itself (LevelDB: its database and lock), so another process may resume it at
    // once; a later read here opens it again.
    await this.store.release?.(this.id);
  }

  /** The session's capabilities (registry, skills, visible sets, MCP connections), when the harness has them. */
  get capabilities(): SessionCapabilities | undefined {
    return this.viewOptions.capabilities;
  }

  /**
   * True while the session only waits for someone — an approval, a confirmation or a message — with nothing of it
   * running, not even a timer. `rein.close()` lets such a session go without interrupting it: its status stays
   * `awaiting-approval` (or `idle`), and another process may resume it.
   */
  get waitingForSomeone(): boolean {
    return !this.host.isDone && this.host.idle;
  }

  /**
   * @internal Append facts to the log through this session's step loop (what a harness records about a session it
   * still runs, e.g. its plugins' stop): a live session's head stays its own.
   */
  recordFacts(facts: readonly FactDraft[]): Promise<unknown> {
    return this.host.recordFacts(facts);
  }

  /** End the session as `cancelled`; running effects are aborted. */
  cancel(reason = 'cancelled by the user'): Promise<void> {
    return this.host.cancel(reason);
  }

  /** Stop this process's work without ending the session; `resume` continues it later. */
  async interrupt(reason = 'interrupted'): Promise<void> {
    await this.host.interrupt(reason);
    // The calls it stopped still run their own protected-path check as they stop: the session's check comes after
    // them (bounded by the abandon grace period), so each removal is recorded once, by whichever check made it.
    if (!this.ending) await this.host.stopped();
    this.ending ??= this.endBackground('interrupted');
    await this.ending;
    await this.viewOptions.capabilities?.close();
  }

  /**
   * Resolves when the session ended or waits for someone (approval, confirmation, message), the memory work it
   * started (candidates extracted from its records, the governance pass when it ends) is done, and every subscriber of
   * `records(from)`, `context$`, `trace$` and `memory$` has been handed every record up to the head, on every store.
   */
  async whenQuiet(): Promise<SessionResult> {
    let result = await this.host.whenQuiet();
    while (this.viewOptions.memory?.busy || this.viewOptions.hooks?.pending) {
      await this.viewOptions.memory?.settled();
      await this.viewOptions.hooks?.settled();
      result = await this.host.whenQuiet();
    }
    if (this.ending) {
      await this.ending;
      result = await this.host.whenQuiet();
    }
    // Every subscriber of `records(from)` and of the views has been handed every record up to the head, on every
    // store (a LevelDB tail reads asynchronously, behind the in-process append).
    await this.store.delivered?.(this.id, this.host.snapshot().head);
    return result;
  }

  /**
   * The session's typed final answer (`createSession({ output })`): resolves with `session.ended.output` once the
   * session completed, typed by its schema (`undefined` for a session without one). Rejects with `OutputError` (code
   * `OUTPUT_INVALID`, `errors` the last answer's validation errors) when it ended without a valid answer — failed
   * after its corrections, cancelled, out of budget — and with `SESSION_ENDED` when this process interrupted it.
   * While the session runs or waits for a person, it waits.
   */
  async output(): Promise<Output> {
    await new Promise<void>((resolve) => {
      const stopping = (record: RecordEnvelope) => sessionEndedIn(record) !== undefined || (record.actor === 'root' && record.type === 'session.interrupted');
      const subscription = listen(this.host.records$, (record) => {
        if (!stopping(record)) return;
        subscription.unsubscribe();
        resolve();
      });
      const now = this.host.result().status;
      if (now !== 'paused') {
        subscription.unsubscribe();
        resolve();
      }
    });
    const result = await this.whenQuiet();
    if (result.status === 'interrupted') throw new ReinError('SESSION_ENDED', `session ${this.id} was interrupted before it ended: resume it for its answer`);
    if (result.status === 'completed') return result.output as Output;
    const errors = result.outputErrors ?? [];
    throw new OutputError({ status: result.status, errors, message: `session ${this.id} ended ${result.status} without a valid final answer${result.reason ? `: ${result.reason}` : ''}` });
  }

  /** The result as of now (status `paused` while it is still running or waiting). */
  result(): SessionResult {
    return this.host.result();
  }

  /** The XState persisted snapshot of the whole actor tree (what replay must reproduce). */
  persistedSnapshot(): unknown {
    return this.host.persisted();
  }

  /** The root agent's state value, usage and the stream head. */
  snapshot(): { value: StateValue; usage: Usage; head: number } {
    return this.host.snapshot();
  }
}
