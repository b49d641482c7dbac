import { methods, RequestError, type AgentContext, type McpServer, type RequestPermissionRequest, type SessionUpdate, type StopReason } from '@agentclientprotocol/sdk';
import type { PermissionMode } from '../../models/permission.records.js';
import type { ReinSession } from '../session/session-handle.js';
import type { TrustQuestion } from '../cli/capability-options.js';
import type { AcpHarness, AcpHarnesses } from './acp-harness.js';
import { AcpUpdates } from './acp-updates.js';
import { toolKindOf, toolLocationsOf } from './acp-tool-call.js';
import { acpError, sessionBusy } from './acp-errors.js';
import { createEntryReader } from '../host/step-record.js';
import type { RecordEnvelope } from '../../models/envelope.js';

/** How long `session/load` and a prompt wait for another process to let go of a session before saying it is busy. */
export const holdWaitMs = 3_000;

/** Updates to one session, sent one after the other (an editor applies them in the order they arrive). */
class Outbox {
  private chain: Promise<void> = Promise.resolve();
  constructor(
    private readonly client: () => AgentContext,
    private readonly sessionId: string,
  ) {}

  send(update: SessionUpdate): void {
    this.chain = this.chain.then(() => this.client().notify(methods.client.session.update, { sessionId: this.sessionId, update })).catch(() => undefined);
  }

  flush(): Promise<void> {
    return this.chain;
  }
}

/** One running prompt turn: cancelled by `session/cancel`, whose signal also withdraws a question still open. */
interface Turn {
  cancelled: boolean;
  abort: AbortController;
}

/** A prompt turn ends with the stop reason the model's last reply (or the session's end) gives. */
const stopOfEnd = (status: string, reason: string | undefined): StopReason | undefined => {
  if (status === 'cancelled' || status === 'interrupted') return 'cancelled';
  if (status === 'budget-exhausted') return reason?.startsWith('token budget') ? 'max_tokens' : 'max_turn_requests';
  if (status === 'completed') return 'end_turn';
  // The model's reply was stopped by the provider's content filter (a `content_filter` model failure ends the session).
  if (status === 'failed' && reason?.startsWith('model call failed: content_filter')) return 'refusal';
  return undefined;
};

const stopOfReply = (stopReason: string | undefined): StopReason => (stopReason === 'max_tokens' ? 'max_tokens' : stopReason === 'content_filter' ? 'refusal' : 'end_turn');

const isLocked = (error: unknown): boolean => (error as { code?: unknown }).code === 'STORE_LOCKED';

/**
 * Wait for another process to let go of a session (`STORE_LOCKED`), briefly: then the session is busy (`-32010`).
 * Anything else fails at once.
 */
export const whenReleased = async <T>(sessionId: string, attempt: () => Promise<T>): Promise<T> => {
  const until = Date.now() + holdWaitMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isLocked(error)) throw error;
      if (Date.now() >= until) throw sessionBusy(sessionId);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
};

/**
 * One ACP session: one rein session (a conversation: each final answer ends the prompt's turn, and the session waits
 * for the next prompt), in the log like any other — resumable, replayable, listed by `rein sessions`. It is created
 * with the first prompt (the prompt is its task), resumed in this process when it was loaded or cancelled, and
 * resumed under another harness when the editor changes its mode. Approvals are asked with
 * `session/request_permission`; `session/cancel` interrupts the turn as Ctrl-C does.
 */
export class AcpSession {
  mode: PermissionMode;
  private handle: ReinSession | undefined;
  private harness: AcpHarness | undefined;
  private turn: Turn | undefined;
  private readonly warned = new Set<AcpHarness>();
  /** One mapping for the whole conversation: a call opened in one turn and settled in a later one stays one tool call. */
  private mapper: AcpUpdates;

  constructor(
    readonly id: string,
    readonly workspace: string,
    private readonly options: { mode: PermissionMode; servers: readonly McpServer[]; exists: boolean; harnesses: AcpHarnesses; client: () => AgentContext },
  ) {
    this.mode = options.mode;
    this.mapper = new AcpUpdates(workspace, 'live');
  }

  /** Go on from what `session/load` sent (the calls its log left open are still known). */
  continueFrom(mapper: AcpUpdates): void {
    this.mapper = mapper.live();
  }

  /** Run one prompt turn to its end and say why it ended. */
  async prompt(text: string): Promise<StopReason> {
    if (this.turn) throw new RequestError(-32600, 'Invalid request', { reason: 'a prompt turn is already running in this session; cancel it first (session/cancel)' });
    const turn: Turn = { cancelled: false, abort: new AbortController() };
    this.turn = turn;
    try {
      return await this.run(text, turn);
    } finally {
      this.turn = undefined;
    }
  }

  /** `session/cancel`: interrupt the running turn as Ctrl-C does (running effects aborted; the session stays resumable). */
  async cancel(): Promise<void> {
    const turn = this.turn;
    if (!turn || turn.cancelled) return;
    turn.cancelled = true;
    turn.abort.abort();
    const handle = this.handle;
    this.handle = undefined;
    if (!handle) return;
    await handle.interrupt('cancelled from the editor (session/cancel)').catch(() => undefined);
    await handle.release().catch(() => undefined);
  }

  /** Let go of the session in this process (the connection ends): it stays resumable. */
  async release(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await handle.release().catch(() => undefined);
  }

  private outbox(): Outbox {
    return new Outbox(this.options.client, this.id);
  }

  /** Ask the editor whether to trust a workspace file (plugins, hooks, MCP servers), as a permission request. */
  private trustQuestion(turn: Turn | undefined): TrustQuestion {
    let asked = 0;
    return async (description, question) => {
      const response = await this.options
        .client()
        .request(
          methods.client.session.requestPermission,
          {
            sessionId: this.id,
            toolCall: { toolCallId: `trust-${++asked}`, title: question, kind: 'other', status: 'pending', content: [{ type: 'content', content: { type: 'text', text: description } }] },
            options: [
              { optionId: 'trust', name: 'Trust it (recorded in rein\'s trust store)', kind: 'allow_always' },
              { optionId: 'refuse', name: 'Not now', kind: 'reject_once' },
            ],
          },
          turn ? { cancellationSignal: turn.abort.signal, stopWaitingOnCancel: true } : {},
        )
        .catch(() => undefined);
      return response?.outcome.outcome === 'selected' && response.outcome.optionId === 'trust';
    };
  }

  /** The harness this session runs under now (its workspace, its mode, the editor's servers). */
  harnessNow(turn?: Turn): Promise<AcpHarness> {
    return this.options.harnesses.harnessFor({ workspace: this.workspace, mode: this.mode, servers: this.options.servers, ask: this.trustQuestion(turn) });
  }

  /**
   * A handle on the rein session under `harness`, and the seq its updates are forwarded from: a new session is created
   * (nothing sent yet), an existing one resumed — refusing to rerun the effects an editor's cancel stopped, and asking
   * the editor about any other in-doubt effect that needs a person.
   */
  private async attach(harness: AcpHarness, text: string, turn: Turn): Promise<{ handle: ReinSession; from: number; created: boolean }> {
    if (this.handle && this.harness === harness) return { handle: this.handle, from: this.handle.snapshot().head + 1, created: false };
    if (this.handle) {
      // Another mode: this process lets go of the session as it is (recorded), and resumes it under the new one.
      await this.handle.interrupt(`the editor switched the permission mode to ${this.mode}`).catch(() => undefined);
      await this.release();
    }
    if (!this.options.exists && (await harness.store.head(this.id)) === 0) {
      const handle = await harness.rein.createSession({ task: text, sessionId: this.id, conversation: true });
      this.options.exists = true;
      this.adopt(handle, harness);
      return { handle, from: handle.snapshot().head + 1, created: true };
    }
    const before = await harness.store.head(this.id);
    const declined = await this.cancelledEffects(harness);
    let { session, report } = await whenReleased(this.id, () => harness.rein.resumeSession(this.id, { declineEffects: declined }));
    const awaiting = report.resolutions.filter((resolution) => resolution.resolution === 'awaiting-confirmation');
    if (awaiting.length > 0) {
      // Effects whose outcome is unknown and that only a person may run again: asked one by one, then resumed again.
      const confirm: string[] = [];
      const decline: string[] = [...declined];
      for (const effect of awaiting) {
        const name = String(effect.args.name ?? effect.kind);
        const args = (effect.args.arguments as Record<string, unknown> | undefined) ?? {};
        const yes = await this.ask(turn, { toolCallId: String(effect.args.callId ?? effect.effectId), title: `run again: ${name} (${effect.reason})`, kind: toolKindOf(name, args), rawInput: args }, [
          { optionId: 'rerun', name: 'Run it again', kind: 'allow_once' },
          { optionId: 'skip', name: 'Do not run it again', kind: 'reject_once' },
        ]);
        (yes === 'rerun' ? confirm : decline).push(effect.effectId);
      }
      await session.release();
      ({ session, report } = await whenReleased(this.id, () => harness.rein.resumeSession(this.id, { confirmEffects: confirm, declineEffects: decline })));
    }
    this.adopt(session, harness);
    return { handle: session, from: before + 1, created: false };
  }

  private adopt(handle: ReinSession, harness: AcpHarness): void {
    this.handle = handle;
    this.harness = harness;
  }

  /** The effects the editor's last cancel interrupted (its `session.interrupted` after the last resume): not run again. */
  private async cancelledEffects(harness: AcpHarness): Promise<string[]> {
    const recent = await harness.store.read(this.id, { reverse: true, limit: 200 });
    for (const record of recent) {
      if (record.type === 'session.resumed') return [];
      if (record.type === 'session.interrupted') return [...((record.data as { running?: string[] }).running ?? [])];
    }
    return [];
  }

  /** Ask the editor a question about a tool call; undefined when the turn was cancelled (or the editor did not answer). */
  private async ask(turn: Turn, toolCall: { toolCallId: string; title: string; kind: ReturnType<typeof toolKindOf>; rawInput: unknown; locations?: ReturnType<typeof toolLocationsOf> }, options: Array<{ optionId: string; name: string; kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' }>): Promise<string | undefined> {
    if (turn.cancelled) return undefined;
    try {
      const params: RequestPermissionRequest = { sessionId: this.id, toolCall: { ...toolCall, status: 'pending' }, options };
      const response = await this.options.client().request(methods.client.session.requestPermission, params, { cancellationSignal: turn.abort.signal, stopWaitingOnCancel: true });
      return response.outcome.outcome === 'selected' ? response.outcome.optionId : undefined;
    } catch {
      return undefined;
    }
  }

  private async run(text: string, turn: Turn): Promise<StopReason> {
    const harness = await this.harnessNow(turn).catch((error: unknown) => {
      throw acpError(error);
    });
    if (turn.cancelled) return 'cancelled';
    const { handle, from } = await this.attach(harness, text, turn).catch((error: unknown) => {
      throw acpError(error);
    });
    if (turn.cancelled) return 'cancelled';
    const outbox = this.outbox();
    if (!this.warned.has(harness)) {
      this.warned.add(harness);
      for (const warning of harness.warnings) outbox.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `rein: ${warning}\n` } });
    }
    const mapper = this.mapper;
    const requested = new Set<string>();
    const ignored = new Set<string>();
    let lastStop: string | undefined;
    let forwarded = from - 1;
    let caughtUp: (() => void) | undefined;
    let target = Number.POSITIVE_INFINITY;
    // A step record's folded facts and intents are read as the records they stand for (an input is held until its step
    // record, written in the same batch, arrives).
    const entries = createEntryReader();
    const forward = (entry: RecordEnvelope): void => {
      if (entry.actor === 'root' && entry.type === 'effect.requested' && (entry.data as { kind: string }).kind === 'callModel') requested.add(String((entry.data as { effectId: string }).effectId));
      if (entry.actor === 'root' && entry.type === 'model.responded') lastStop = String((entry.data as { stopReason: string }).stopReason);
      for (const update of mapper.updates(entry)) outbox.send(update);
    };
    const subscription = handle.records(from).subscribe((record) => {
      for (const entry of entries.push(record)) forward(entry);
      forwarded = record.seq;
      if (forwarded >= target) caughtUp?.();
    });
    // The model's text as it streams: only for calls whose request this turn forwarded (any other call's text comes
    // from its record once it settles, never twice and never in part).
    subscription.add(
      handle.live$.subscribe((event) => {
        if (event.type !== 'model.delta' || event.actor !== 'root' || ignored.has(event.effectId)) return;
        if (!requested.has(event.effectId)) {
          ignored.add(event.effectId);
          return;
        }
        mapper.markStreamed(event.effectId);
        outbox.send({ sessionUpdate: event.channel === 'reasoning' ? 'agent_thought_chunk' : 'agent_message_chunk', content: { type: 'text', text: event.text } });
      }),
    );
    try {
      try {
        await handle.send(text);
      } catch (error) {
        // A cancel that landed while the message was being sent: the turn is over, not failed.
        if (turn.cancelled) return 'cancelled';
        throw acpError(error);
      }
      const ended = await this.waitTurn(handle, turn);
      // Every record of the turn is forwarded before the turn's answer.
      const head = handle.snapshot().head;
      if (forwarded < head && !turn.cancelled) {
        target = head;
        await new Promise<void>((resolve) => {
          caughtUp = resolve;
          if (forwarded >= target) resolve();
        });
      }
      for (const entry of entries.flush()) forward(entry);
      // The last reply's own stop reason (read once every record of the turn was forwarded).
      return ended === 'reply' ? stopOfReply(lastStop) : ended;
    } finally {
      subscription.unsubscribe();
      await outbox.flush();
    }
  }

  /** Wait until the turn ends: each approval it asks is put to the editor; the session's state then gives the stop reason. */
  private async waitTurn(handle: ReinSession, turn: Turn): Promise<StopReason | 'reply'> {
    for (;;) {
      const result = await handle.whenQuiet();
      if (turn.cancelled) return 'cancelled';
      if (result.status === 'paused') {
        const pending = handle.pendingApprovals();
        if (pending.length === 0) return 'reply';
        for (const request of pending) {
          const answer = await this.ask(turn, { toolCallId: request.callId, title: request.summary, kind: toolKindOf(request.tool, request.arguments), rawInput: request.arguments, locations: toolLocationsOf(request.tool, request.arguments, this.workspace) }, [
            { optionId: 'allow-once', name: 'Allow once', kind: 'allow_once' },
            { optionId: 'allow-session', name: `Always allow ${request.suggestedRule ?? request.tool} in this session`, kind: 'allow_always' },
            { optionId: 'deny', name: 'Reject', kind: 'reject_once' },
          ]);
          if (turn.cancelled) return 'cancelled';
          const decision = answer === 'allow-once' || answer === 'allow-session' || answer === 'deny' ? answer : 'deny';
          await handle.approve(request.approvalId, { decision, ...(answer === undefined ? { feedback: 'the editor gave no answer' } : {}) }).catch(() => undefined);
        }
        continue;
      }
      const stop = stopOfEnd(result.status, result.reason);
      if (stop) return stop === 'end_turn' ? 'reply' : stop;
      throw acpError(Object.assign(new Error(`the session ended ${result.status}${result.reason ? `: ${result.reason}` : ''}`), { code: 'SESSION_FAILED' }));
    }
  }
}
