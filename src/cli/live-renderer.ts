import type { Observable, Subscription } from 'rxjs';
import { terminalSafe } from '../util/terminal-text.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ToolSettled } from '../../models/tool.records.js';
import { exitText } from '../trace/trace-report.js';
import type { TraceOutcome } from '../trace/trace-types.js';
import { isProviderFailure } from './provider-failure.js';
import type { LiveEvent } from '../../models/live-events.js';
import type { SessionResult } from '../host/session-host.js';
import { StatusLine } from './status-line.js';
import { defaultPrices, type Prices } from '../../models/price-table.js';
import { formatCost, sessionCost } from '../projections/cost.js';
import { planChecklist, type PlanStepText } from '../projections/plan-text.js';
import { createEntryReader } from '../host/step-record.js';
import { callTally, callVerdict, plural, settledCount, summarizeArguments, verdictMark, type CallVerdict, unmatchedRuleText } from './transcript.js';

/** What a completed session's outcome means, in the summary line (`completed · outcome failed (…)`). */
const outcomeNotes: Partial<Record<TraceOutcome, string>> = {
  failed: 'its last verification failed: rein trace shows which; the exit code is 1',
  unverified: 'no passing verification speaks for the result: rein trace says why',
};

/** What the renderer reads from a session: its durable records and its live progress. */
export interface RenderedSession {
  readonly records$: Observable<RecordEnvelope>;
  readonly live$: Observable<LiveEvent>;
}

export interface RendererOptions {
  /** Animate a status line (default: the stream is a TTY and `TERM` is not `dumb`). */
  tty?: boolean;
  /** Use colour (default: a TTY that is not `TERM=dumb`, and no `NO_COLOR` in the environment). */
  colour?: boolean;
  /** Prices for the summary's cost (default the shipped `defaultPrices` with the configuration's `prices` over them). */
  prices?: Prices;
  /** Flags the summary's follow-up commands carry (` --workspace demo`): those that found this session's store. */
  where?: string;
}

/**
 * Renders a running session for a person: assistant text as it streams, a spinner line while the model thinks or a
 * tool runs (TTY only), a notice per retried model attempt, one line per finished tool call with its status and
 * duration, and a final summary. Colour only on a TTY, and never with `NO_COLOR`.
 */
export class LiveRenderer {
  private readonly argsByEffect = new Map<string, string>();
  /** Per MCP server, the tool list last shown (a fingerprint): a list_changed that changed nothing prints nothing. */
  private readonly mcpTools = new Map<string, string>();
  /** Effects whose `effect.requested` this renderer has shown (or was told about): their live events print at once. */
  private readonly requested = new Set<string>();
  /** Live events of effects whose request is not shown yet, in arrival order: printed right after that request. */
  private readonly held = new Map<string, LiveEvent[]>();
  /**
   * Effects whose `effect.requested` was shown while its batch is still being published: the records after it in the
   * same batch (a child's `delegation.completed`, the join) come first, so their live events wait for the batch's end.
   */
  private readonly releasing = new Set<string>();
  /** The input record whose step requested the effects in `releasing` (their records' `cause`). */
  private releasingCause: string | undefined;
  /** When each tool call started, by its `tool.started` record's time: a call's duration is read from the log. */
  private readonly toolStartedAt = new Map<string, number>();
  private readonly labels = new Map<string, string>();
  private readonly status: StatusLine;
  private readonly colour: boolean;
  private readonly prices: Prices;
  private readonly where: string;
  private midLine = false;
  /** The root call whose reasoning is being shown (dimmed, after `thinking: `), until its text or anything else comes. */
  private reasoningOf: string | undefined;
  /** The root agent's calls this renderer showed, by verdict: the summary's counts when it is given no log. */
  private readonly shown: Record<CallVerdict, number> = { passed: 0, failed: 0, denied: 0, background: 0 };
  /** The last plan shown, per agent: a plan the model sends again unchanged is not printed again. */
  private readonly plans = new Map<string, string>();

  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    options: RendererOptions = {},
  ) {
    // A terminal that says it understands no escape sequences (`TERM=dumb`: an editor's shell, a CI log viewer) gets
    // plain lines, as a pipe does: no colour, no spinner line redrawn in place.
    const tty = options.tty ?? (Boolean(out.isTTY) && process.env.TERM !== 'dumb');
    this.prices = options.prices ?? defaultPrices;
    this.where = options.where ?? '';
    this.colour = options.colour ?? (tty && process.env.NO_COLOR === undefined);
    this.status = new StatusLine(out, tty, (text) => this.paint(2, text));
  }

  attach(session: RenderedSession): Subscription {
    // Everything shown comes from a model, a tool, a file or a server: its control characters are escaped before any
    // of it is rendered (model text keeps its line breaks), so no `ESC[2K` or carriage return can rewrite a line.
    const subscription = session.live$.subscribe((event) => this.onLive(terminalSafe(event, { newlines: event.type === 'model.delta' })));
    // In the order the runtime produced them: a step's folded facts (a read-only tool's start) before its input.
    const reader = createEntryReader();
    subscription.add(session.records$.subscribe((record) => {
      for (const entry of reader.push(record)) this.onRecord(terminalSafe(entry));
    }));
    subscription.add(() => this.status.clear());
    return subscription;
  }

  /** Show a call requested before this renderer attached (a rerun on resume) with its arguments, like any call. */
  rememberCall(effectId: string, args: Record<string, unknown>): void {
    this.argsByEffect.set(effectId, summarizeArguments(terminalSafe(args)));
    this.rememberEffect(effectId);
  }

  /** An effect requested before this renderer attached (a rerun on resume): its live events need not wait for its request. */
  rememberEffect(effectId: string): void {
    this.requested.add(effectId);
    this.release(effectId);
  }

  /**
   * The closing lines: outcome, turns, tool calls (and how many failed, were denied or were left running), tokens,
   * time, and how to replay or inspect the session. Turns and calls are the whole session's (its state is rebuilt
   * from the log); pass the session's `records` so the failed and denied counts are too — after a resume this
   * process saw only part of the session. The call count is the budget's (a call waiting for its approval counts)
   * unless more calls settled: those a reply proposed past the tool-call budget were refused without counting.
   * `outcomeOf` is the trace's outcome (`sessionOutcome`), shown beside a `completed` status.
   */
  summary(result: SessionResult, startedAt: number, records?: Iterable<RecordEnvelope>, outcomeOf?: TraceOutcome): string {
    // Whatever still waits for a request this renderer never saw is shown now rather than lost.
    this.releaseBatch();
    for (const effectId of [...this.held.keys()]) this.release(effectId);
    this.status.clear();
    this.endLine();
    const tokens = result.usage.inputTokens + result.usage.outputTokens;
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const color = result.status === 'completed' ? 32 : result.status === 'paused' || result.status === 'interrupted' ? 33 : 31;
    const id = result.sessionId;
    const tally = records ? callTally(records) : this.shown;
    // The lifecycle status, then (for a completed session) what its verifications showed: the trace's outcome.
    const outcome = result.status === 'completed' && outcomeOf ? ` · outcome ${this.paint(outcomeOf === 'succeeded' ? 32 : outcomeOf === 'failed' ? 31 : 33, outcomeOf)}${outcomeNotes[outcomeOf] ? ` (${outcomeNotes[outcomeOf]})` : ''}` : '';
    const providerFailed = isProviderFailure(result);
    const lines = [
      `${this.paint(color, result.status)}${outcome}${result.reason ? ` — ${result.reason}` : ''}`,
      `${plural(result.usage.turns, 'turn')} · ${plural(Math.max(result.usage.toolCalls, settledCount(tally)), 'tool call')}${this.callCounts(tally)} · ${tokens} tokens${records ? ` · ${formatCost(sessionCost(records, this.prices))}` : ''} · ${seconds} s · ${result.head} records`,
      `session ${id}: rein show ${id}${this.where} · rein trace ${id}${this.where} · rein replay ${id}${this.where}${result.status === 'paused' || result.status === 'interrupted' ? ` · rein resume ${id}${this.where}` : ''}`,
      ...(providerFailed ? [`the provider failed: once it answers again (the key, the network, the endpoint fixed), continue it with rein resume ${id} — a new attempt from the last durable step, with the provider, model and base URL the session was created with unless flags say otherwise`] : []),
      // A session whose model never answered has no outputs to replay.
      ...(result.usage.turns > 0 && !providerFailed ? [this.paint(2, `rerun its model outputs against this code: rein run --provider recorded --from ${id}${this.where}`)] : []),
    ];
    return `\n${lines.join('\n')}\n`;
  }

  /**
   * Live events run ahead of the records: an effect starts (a model call streams its reply) as soon as its step is
   * written, while `records$` shows records once they are acknowledged durable — so the next turn's text would print
   * before the previous tool result. The display keeps log order: an effect's live events wait until the record
   * that requested it is shown, and everything that record's batch holds is shown before it: a step's records are
   * published together, synchronously, so the request's live events are released once the batch is out (a
   * microtask later) — the delegation records a step writes after the next model call's request come first.
   */
  private onLive(event: LiveEvent): void {
    if (!this.requested.has(event.effectId)) {
      const waiting = this.held.get(event.effectId);
      if (waiting) waiting.push(event);
      else this.held.set(event.effectId, [event]);
      return;
    }
    this.showLive(event);
  }

  private holdUntilBatchEnd(effectId: string, cause: string | undefined): void {
    if (this.releasing.size === 0) queueMicrotask(() => this.releaseBatch());
    this.releasing.add(effectId);
    this.releasingCause = cause;
  }

  private releaseBatch(): void {
    const effectIds = [...this.releasing];
    this.releasing.clear();
    for (const effectId of effectIds) {
      this.requested.add(effectId);
      this.release(effectId);
    }
  }

  private release(effectId: string): void {
    const waiting = this.held.get(effectId);
    if (!waiting) return;
    this.held.delete(effectId);
    for (const event of waiting) this.showLive(event);
  }

  private showLive(event: LiveEvent): void {
    switch (event.type) {
      case 'model.delta':
        if (event.channel === 'reasoning' && event.actor === 'root') {
          // Reasoning an endpoint streams is shown as it comes, dimmed and labelled, on lines of its own.
          this.status.clear();
          if (this.reasoningOf !== event.effectId) {
            this.endLine();
            this.reasoningOf = event.effectId;
            this.out.write(this.paint(2, 'thinking: '));
          }
          this.out.write(this.paint(2, event.text));
          this.midLine = !event.text.endsWith('\n');
        } else if (event.channel === 'text' && event.actor === 'root') {
          this.status.clear();
          if (this.reasoningOf !== undefined) {
            this.endLine();
            this.reasoningOf = undefined;
          }
          this.out.write(event.text);
          this.midLine = !event.text.endsWith('\n');
        } else if (!this.midLine) {
          // Child agents run side by side: their text is in the trace; the renderer shows their steps, not their prose.
          this.status.show('thinking', false);
        }
        return;
      case 'model.intent':
        this.endLine();
        this.status.show(`preparing ${event.name ?? 'a tool call'} (${event.argumentsLength} chars)`, false);
        return;
      case 'model.retrying':
        this.status.clear();
        this.endLine();
        this.out.write(this.paint(33, `  ↻ ${event.code}: retrying in ${(event.delayMs / 1000).toFixed(1)} s (attempt ${event.attempt + 1})\n`));
        return;
      case 'model.fallback':
        this.status.clear();
        this.endLine();
        this.out.write(this.paint(33, `  ↪ ${event.code} from ${event.from}: falling back to ${event.to} (attempt ${event.attempt + 1})\n`));
        return;
      case 'effect.started':
        this.labels.set(event.effectId, event.label);
        if (event.kind === 'executeTool') {
          this.endLine();
          this.status.show(`${event.label} ${this.argsByEffect.get(event.effectId) ?? ''}`.trim());
        } else if (event.kind === 'callModel' && event.actor === 'root') {
          // The root's next reply starts on a line of its own (answers of turns without tool calls ran together).
          this.endLine();
          this.status.show('thinking');
        } else if (!this.midLine) {
          this.status.show(event.kind === 'callModel' ? 'thinking' : event.label);
        }
        return;
      case 'effect.finished':
        if (event.kind === 'callModel') this.status.clear();
        return;
      case 'effect.progress':
        if (!this.midLine) this.status.show(`${this.labels.get(event.effectId) ?? 'tool'} ${event.message}`.trim());
        return;
      default:
        return;
    }
  }

  private onRecord(record: RecordEnvelope): void {
    // One publication can hold several steps (a commit that covered them all): the held effects' live events are
    // shown when their step ends — at the first record another step wrote — not only once the publication is over.
    if (this.releasing.size > 0 && record.cause !== this.releasingCause) this.releaseBatch();
    if (record.type === 'effect.requested') {
      const data = record.data as { effectId: string; kind: string; args: { arguments?: Record<string, unknown> } };
      if (data.kind === 'executeTool') this.argsByEffect.set(data.effectId, summarizeArguments(data.args.arguments ?? {}));
      this.holdUntilBatchEnd(data.effectId, record.cause);
    } else if (record.type === 'approval.requested') {
      const data = record.data as { summary: string; reason: string };
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.who(record.actor)}${this.paint(33, '?')} ${data.summary} ${this.paint(2, `— needs approval: ${data.reason}`)}\n`);
    } else if (record.type === 'approval.replied') {
      const data = record.data as { decision: string; feedback?: string };
      // An answer is recorded by the permission actor (`<agent>/approval-<n>`): it is named after the agent that asked.
      this.out.write(`  ${this.who(record.actor.slice(0, record.actor.lastIndexOf('/')))}${this.paint(2, `→ ${data.decision}${data.feedback ? `: ${data.feedback}` : ''}`)}\n`);
    } else if (record.type === 'delegation.started' || record.type === 'delegation.completed' || record.type === 'delegation.failed' || record.type === 'delegation.joined') {
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.delegationLine(record)}\n`);
    } else if (record.type === 'permission.rule-unmatched') {
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.paint(33, `! ${unmatchedRuleText(record.data as { rule: string; suggestion?: string })}`)}\n`);
    } else if (record.type === 'memory.unavailable') {
      const data = record.data as { code: string; message: string };
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.paint(33, '!')} memory unavailable: ${data.code} ${data.message} ${this.paint(2, '— this session runs without memory (rein memory list shows the damage; --no-memory skips it)')}\n`);
    } else if (record.type === 'capability.loaded') {
      const data = record.data as { name: string; file?: string };
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.paint(36, '⇣')} skill ${data.name}${data.file ? ` ${data.file}` : ''} loaded\n`);
    } else if (record.type === 'mcp.connected' || record.type === 'mcp.failed' || record.type === 'mcp.reconnecting' || record.type === 'mcp.degraded' || record.type === 'mcp.tools-listed') {
      if (!this.mcpToolsMoved(record)) return;
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.mcpLine(record)}\n`);
    } else if (record.type === 'capability.diff' && record.actor === 'root') {
      const data = record.data as { added: unknown[]; removed: Array<{ name: string; reason: string }>; turn: number; deferred: number };
      if (data.turn > 1 && (data.added.length > 0 || data.removed.length > 0)) {
        this.status.clear();
        this.endLine();
        this.out.write(`  ${this.paint(2, `◇ tools: +${data.added.length} −${data.removed.length}${data.deferred > 0 ? `, ${data.deferred} deferred` : ''}`)}\n`);
      }
    } else if (record.type === 'hook.decided' && (record.data as { point: string }).point === 'stop') {
      const data = record.data as { decision: string; reason?: string; decidedBy?: string };
      if (data.decision !== 'continue' && data.decision !== 'stop') return;
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.paint(33, '↻')} stop hook ${data.decidedBy ?? ''}${data.decidedBy ? ': ' : ''}${data.decision}${this.paint(2, data.reason ? ` — ${data.reason}` : '')}\n`);
    } else if (record.type === 'model.responded') {
      const data = record.data as { stopReason: string; toolCalls: unknown[] };
      if (data.stopReason !== 'max_tokens' || data.toolCalls.length > 0) return;
      this.status.clear();
      this.endLine();
      const who = record.actor === 'root' ? '' : `${this.paint(36, `[${record.actor.slice(record.actor.lastIndexOf('/') + 1)}]`)} `;
      this.out.write(`  ${who}${this.paint(33, '!')} the reply was cut at the output token limit (max_tokens)\n`);
    } else if (record.type === 'plan.updated') {
      const data = record.data as { plan: PlanStepText[]; explanation?: string };
      const lines = planChecklist(data.plan);
      const fingerprint = lines.join('\n');
      if (this.plans.get(record.actor) === fingerprint) return;
      this.plans.set(record.actor, fingerprint);
      this.status.clear();
      this.endLine();
      const done = data.plan.filter((entry) => entry.status === 'completed').length;
      this.out.write(`  ${this.who(record.actor)}${this.paint(36, '☰')} plan ${this.paint(2, `(${done} of ${data.plan.length} done)${data.explanation ? ` — ${data.explanation}` : ''}`)}\n`);
      for (const line of lines) this.out.write(`    ${line.startsWith('[x]') ? this.paint(2, line) : line.startsWith('[>]') ? this.paint(1, line) : line}\n`);
    } else if (record.type === 'tool.started') {
      this.toolStartedAt.set((record.data as { effectId: string }).effectId, record.at);
    } else if (record.type === 'tool.settled') {
      const data = record.data as ToolSettled;
      // Durations are the recorded ones, the figures `rein show` prints: a command's own run time (`execution`), or
      // from the call's `tool.started` to its `tool.settled`; a call refused before it ran has none. The time this
      // process took to display the result (a batch waiting for its fsync) is not the tool's.
      const started = this.toolStartedAt.get(data.effectId);
      this.toolStartedAt.delete(data.effectId);
      const elapsed = started === undefined ? undefined : Math.max(0, record.at - started);
      // A command that ran is judged by its exit, whatever the call's status: `✗ bash node --test (exit 1, 812 ms)`;
      // one left running in the background has no outcome yet: `… bash npm run dev (running in the background)`.
      const verdict = callVerdict(data);
      if (record.actor === 'root') this.shown[verdict]++;
      const duration = data.execution ? ` (${exitText(data.execution)})` : verdict === 'background' ? ' (running in the background, outcome unknown)' : elapsed === undefined ? '' : ` (${elapsed} ms)`;
      const mark = this.paint(verdict === 'passed' ? 32 : verdict === 'background' ? 33 : 31, verdictMark(verdict));
      const code = data.errorCode ? ` ${this.paint(31, data.errorCode)}` : '';
      this.status.clear();
      this.endLine();
      this.out.write(`  ${this.who(record.actor)}${mark} ${data.name} ${this.argsByEffect.get(data.effectId) ?? ''}${code}${this.paint(2, duration)}\n`);
    }
  }

  /** False for a tool list identical to the one last shown for its server (the line would say nothing new). */
  private mcpToolsMoved(record: RecordEnvelope): boolean {
    const data = record.data as { server: string; tools?: unknown[]; problems?: unknown[] };
    if (record.type !== 'mcp.connected' && record.type !== 'mcp.tools-listed') return true;
    const fingerprint = JSON.stringify([data.tools ?? [], data.problems ?? []]);
    const before = this.mcpTools.get(data.server);
    this.mcpTools.set(data.server, fingerprint);
    return record.type === 'mcp.connected' || before !== fingerprint;
  }

  /** One line per MCP server event: connected (tool count), tools changed, degraded, reconnecting, failed. */
  private mcpLine(record: RecordEnvelope): string {
    const data = record.data as { server: string; tools?: unknown[]; problems?: unknown[]; error?: string; attempt?: number; delayMs?: number };
    const problems = data.problems && data.problems.length > 0 ? this.paint(33, ` (${data.problems.length} tool(s) unusable)`) : '';
    if (record.type === 'mcp.connected') return `${this.paint(32, '⇡')} mcp ${data.server} ready: ${data.tools?.length ?? 0} tools${problems}`;
    if (record.type === 'mcp.tools-listed') return `${this.paint(36, '⇡')} mcp ${data.server} tools changed: ${data.tools?.length ?? 0} tools${problems}`;
    if (record.type === 'mcp.degraded') return `${this.paint(33, '!')} mcp ${data.server} degraded: ${data.error ?? ''}`;
    if (record.type === 'mcp.reconnecting') return `${this.paint(33, '↻')} mcp ${data.server} reconnecting in ${((data.delayMs ?? 0) / 1000).toFixed(1)} s (attempt ${data.attempt}): ${data.error ?? ''}`;
    return `${this.paint(31, '✗')} mcp ${data.server} failed: ${data.error ?? ''}`;
  }

  /** One line per child agent event: started (role, actor path), completed (report status), failed (class), and the join. */
  private delegationLine(record: RecordEnvelope): string {
    const data = record.data as { taskId?: string; child?: string; task?: { role: string }; reportStatus?: string; failureClass?: string; cancelled?: boolean; reason?: string; policy?: string; outcome?: string; children?: unknown[] };
    if (record.type === 'delegation.started') return this.paint(36, `↳ task ${data.taskId} (${data.task?.role}) started as ${data.child}`);
    if (record.type === 'delegation.completed') return `${this.paint(32, '↳')} task ${data.taskId} completed, report ${data.reportStatus}`;
    if (record.type === 'delegation.failed') return `${this.paint(data.cancelled ? 33 : 31, '↳')} task ${data.taskId} ${data.cancelled ? 'cancelled' : `failed (${data.failureClass})`}${this.paint(2, ` — ${data.reason ?? ''}`)}`;
    return `${this.paint(data.outcome === 'satisfied' ? 32 : 33, '✓')} delegate_task joined (${data.policy}): ${data.outcome}, ${data.children?.length ?? 0} task(s)`;
  }

  /** A child agent's lines are prefixed with its task's name (`[w] `); the root agent's are not. */
  private who(actor: string): string {
    return actor === 'root' ? '' : `${this.paint(36, `[${actor.slice(actor.lastIndexOf('/') + 1)}]`)} `;
  }

  private callCounts(tally: Record<CallVerdict, number>): string {
    const counts = [...(tally.failed > 0 ? [`${tally.failed} failed`] : []), ...(tally.denied > 0 ? [`${tally.denied} denied`] : []), ...(tally.background > 0 ? [`${tally.background} in the background`] : [])];
    return counts.length > 0 ? ` (${counts.join(', ')})` : '';
  }

  private paint(code: number, text: string): string {
    return this.colour ? `\u001b[${code}m${text}\u001b[0m` : text;
  }

  private endLine(): void {
    this.reasoningOf = undefined;
    if (!this.midLine) return;
    this.out.write('\n');
    this.midLine = false;
  }
}
