import type { PlanEntry, SessionUpdate } from '@agentclientprotocol/sdk';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ToolSettled } from '../../models/tool.records.js';
import { callVerdict } from '../cli/transcript.js';
import { toolDiffsOf, toolKindOf, toolLocationsOf, toolTitleOf } from './acp-tool-call.js';
import { flattenRecords } from '../host/step-record.js';

/** `load`: replaying a stored session (the user's messages included); `live`: a prompt turn as it runs. */
export type UpdateMode = 'load' | 'live';

interface OpenCall {
  name: string;
  arguments: Record<string, unknown>;
}

const text = (value: string) => ({ type: 'text' as const, text: value });

/**
 * The ACP `session/update`s a session's records stand for — the one mapping both `session/load` (every stored record,
 * in order) and a live prompt turn (each record as it becomes durable) use, so what an editor shows of a turn is what
 * it shows when it loads the session later. Only the root agent's conversation is shown: the user's messages (on
 * load), the model's reasoning and text, each tool call (`tool_call`, then `tool_call_update` as it starts and
 * settles, with its output and edits as diffs) and the model's plan (`plan`). A live turn streams the text from the
 * model as it comes (`markStreamed`), and the record then adds nothing more of it. Stateful only per open call:
 * a call's name and arguments are kept from its request to its settlement.
 */
export class AcpUpdates {
  private readonly calls = new Map<string, OpenCall>();
  private readonly created = new Map<string, Set<string>>();
  private readonly streamed = new Set<string>();

  constructor(
    private readonly workspace: string,
    private mode: UpdateMode,
  ) {}

  /**
   * Go on live after a load: the calls the log left open (one an editor's cancel interrupted) are still known, so
   * their settlement in a later turn updates the same tool call.
   */
  live(): this {
    this.mode = 'live';
    return this;
  }

  /** A live turn streamed this model call's text (and reasoning) as it came: its record adds no chunk. */
  markStreamed(effectId: string): void {
    this.streamed.add(effectId);
  }

  /** The updates one record stands for (none for most records). */
  updates(record: RecordEnvelope): SessionUpdate[] {
    if (record.actor !== 'root') return [];
    const data = record.data as Record<string, unknown>;
    switch (record.type) {
      case 'user.message':
        return this.mode === 'load' ? [{ sessionUpdate: 'user_message_chunk', content: text(String(data.text)) }] : [];
      case 'model.responded':
        return this.replied(data);
      case 'tool.started': {
        const callId = String(data.callId);
        return this.calls.has(callId) ? [{ sessionUpdate: 'tool_call_update', toolCallId: callId, status: 'in_progress' }] : [];
      }
      case 'file.written': {
        if (data.before !== null) return [];
        const callId = String(data.callId);
        this.created.set(callId, (this.created.get(callId) ?? new Set()).add(String(data.path)));
        return [];
      }
      case 'tool.settled':
        return this.settled(data as unknown as ToolSettled);
      case 'plan.updated': {
        const plan = (data.plan as Array<{ step: string; status: PlanEntry['status'] }>) ?? [];
        return [{ sessionUpdate: 'plan', entries: plan.map((entry) => ({ content: entry.step, priority: 'medium', status: entry.status })) }];
      }
      default:
        return [];
    }
  }

  private replied(data: Record<string, unknown>): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    const effectId = String(data.effectId);
    if (!this.streamed.delete(effectId)) {
      if (typeof data.reasoning === 'string' && data.reasoning !== '') updates.push({ sessionUpdate: 'agent_thought_chunk', content: text(data.reasoning) });
      if (typeof data.text === 'string' && data.text !== '') updates.push({ sessionUpdate: 'agent_message_chunk', content: text(data.text) });
    }
    for (const call of (data.toolCalls as Array<{ callId: string; name: string; arguments: Record<string, unknown> }>) ?? []) {
      this.calls.set(call.callId, { name: call.name, arguments: call.arguments });
      updates.push({
        sessionUpdate: 'tool_call',
        toolCallId: call.callId,
        title: toolTitleOf(call.name, call.arguments),
        kind: toolKindOf(call.name, call.arguments),
        status: 'pending',
        locations: toolLocationsOf(call.name, call.arguments, this.workspace),
        rawInput: call.arguments,
      });
    }
    return updates;
  }

  private settled(settled: ToolSettled): SessionUpdate[] {
    const call = this.calls.get(settled.callId);
    if (!call) return [];
    this.calls.delete(settled.callId);
    const created = this.created.get(settled.callId) ?? new Set<string>();
    this.created.delete(settled.callId);
    const verdict = callVerdict(settled);
    const ok = verdict === 'passed' || verdict === 'background';
    return [
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: settled.callId,
        status: ok ? 'completed' : 'failed',
        content: [{ type: 'content', content: text(settled.observation) }, ...(settled.status === 'ok' ? toolDiffsOf(call.name, call.arguments, this.workspace, created) : [])],
      },
    ];
  }
}

/** Every update a stored session stands for, in log order (what `session/load` sends), and the mapper that made them. */
export const loadUpdates = (records: readonly RecordEnvelope[], workspace: string): { updates: SessionUpdate[]; mapper: AcpUpdates } => {
  const mapper = new AcpUpdates(workspace, 'load');
  // A step record's folded facts and intents are read as the records they stand for, in the order they happened.
  return { updates: flattenRecords(records).flatMap((record) => mapper.updates(record)), mapper };
};
