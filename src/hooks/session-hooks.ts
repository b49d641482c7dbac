import type { RecordEnvelope } from '../../models/envelope.js';
import type { DelegationCompleted, DelegationFailed, DelegationStarted } from '../../models/delegation.records.js';
import type { DecisionPoint } from '../../models/hook.records.js';
import type { SessionEnded } from '../../models/session.records.js';
import type { FactDraft } from '../../models/envelope.js';
import { rootPath } from '../host/actor-tree.js';
import type { HookKernel } from './hook-kernel.js';
import { decidePoint } from './decide-point.js';
import type { PointDecision } from './hook-types.js';
import { entriesOf } from '../host/step-record.js';

/** Where a session's hook facts go: the session host's fact queue (the same single writer as every step). */
export interface HookFactSink {
  recordFacts(facts: readonly FactDraft[], options?: { actor?: string }): Promise<unknown>;
}

/**
 * The session-level hook points: `sessionStart` (once, when the session is created), `userPromptSubmit` (before a
 * user message is stepped; a block keeps it from the model), and the observers `subagentStart`, `subagentStop` and
 * `sessionEnd`, which run after their record is durable (from the live record stream, so replay and resume — which
 * read the log — never run them again). Each decision is a `hook.decided` fact. `settled()` waits for the observers.
 */
export class SessionHooks {
  private busy = 0;
  private waiters: Array<() => void> = [];
  private sink: HookFactSink | undefined;

  constructor(
    private readonly kernel: HookKernel,
    private readonly options: { sessionId: string; cwd: string; modeOf: (actor: string) => string; now: () => number },
  ) {}

  attach(sink: HookFactSink): void {
    this.sink = sink;
  }

  private base(actor: string) {
    return { sessionId: this.options.sessionId, actor, cwd: this.options.cwd, mode: this.options.modeOf(actor) };
  }

  private async decide(point: DecisionPoint, actor: string, input: Record<string, unknown>): Promise<{ decided: PointDecision; fact?: FactDraft }> {
    return decidePoint({ kernel: this.kernel, point, subject: {}, input: { ...this.base(actor), point, ...input }, signal: new AbortController().signal, now: this.options.now });
  }

  /** `userPromptSubmit`: the fact to write with the message, or a block (its fact must be written alone). */
  async promptSubmitted(prompt: string): Promise<{ facts: FactDraft[]; blocked?: string }> {
    if (!this.kernel.has('userPromptSubmit')) return { facts: [] };
    const { decided, fact } = await this.decide('userPromptSubmit', rootPath, { prompt });
    return { facts: fact ? [fact] : [], ...(decided.decision === 'block' ? { blocked: decided.reason ?? 'blocked by a hook' } : {}) };
  }

  /** `sessionStart`: run once for a new session; its context reaches the model with the first message. */
  sessionStarted(task: string): Promise<void> {
    if (!this.kernel.has('sessionStart')) return Promise.resolve();
    return this.track(rootPath, 'sessionStart', { task });
  }

  /** Run the observer points a durable record calls for (a step record's: those of the records it stands for). */
  observe(stored: RecordEnvelope): void {
    for (const record of entriesOf(stored)) this.observeEntry(record);
  }

  private observeEntry(record: RecordEnvelope): void {
    if (record.type === 'delegation.started' && this.kernel.has('subagentStart')) {
      const started = record.data as DelegationStarted;
      void this.track(started.parent, 'subagentStart', { child: started.child, role: started.task.role, objective: started.task.objective });
    } else if ((record.type === 'delegation.completed' || record.type === 'delegation.failed') && this.kernel.has('subagentStop')) {
      const ended = record.data as DelegationCompleted | DelegationFailed;
      const failed = record.type === 'delegation.failed' ? (record.data as DelegationFailed) : undefined;
      void this.track(record.actor, 'subagentStop', { child: ended.child, status: failed ? (failed.cancelled ? 'cancelled' : 'failed') : 'completed', ...(failed ? { reason: failed.reason } : {}) });
    } else if (record.type === 'session.ended' && record.actor === rootPath && this.kernel.has('sessionEnd')) {
      const ended = record.data as SessionEnded;
      void this.track(rootPath, 'sessionEnd', { status: ended.status, ...(ended.reason ? { reason: ended.reason } : {}) });
    }
  }

  get pending(): boolean {
    return this.busy > 0;
  }

  /** Resolves when no observer hook is running. */
  settled(): Promise<void> {
    return this.busy === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  private async track(actor: string, point: DecisionPoint, input: Record<string, unknown>): Promise<void> {
    this.busy++;
    try {
      const { fact } = await this.decide(point, actor, input);
      if (fact && this.sink) await this.sink.recordFacts([fact], { actor });
    } catch {
      // An observer hook never takes the session down; the kernel already records a hook's own failure.
    } finally {
      this.busy--;
      if (this.busy === 0) for (const waiter of this.waiters.splice(0)) waiter();
    }
  }
}
