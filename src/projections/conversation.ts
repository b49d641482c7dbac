import type { ModelMessage } from '../../models/model-contract.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ModelResponded } from '../../models/model.records.js';
import type { ToolSettled } from '../../models/tool.records.js';
import type { UserMessage } from '../../models/session.records.js';

/**
 * The conversation of one actor as model messages, folded from its records: user messages, assistant replies with
 * their tool calls, and tool observations (labelled untrusted). Appending is O(1) per record; records at or below
 * the last folded seq are ignored, so a duplicate delivery leaves the view unchanged.
 */
export class ConversationView {
  readonly messages: ModelMessage[];
  private lastSeq = 0;

  constructor(
    readonly actor: string,
    systemPrompt?: string,
  ) {
    this.messages = systemPrompt === undefined ? [] : [{ role: 'system', content: systemPrompt }];
  }

  /** Fold one record into the view (records of other actors are ignored). */
  add(record: RecordEnvelope): void {
    if (record.seq <= this.lastSeq) return;
    this.lastSeq = record.seq;
    if (record.actor !== this.actor) return;
    if (record.type === 'user.message') {
      this.messages.push({ role: 'user', content: (record.data as UserMessage).text });
    } else if (record.type === 'model.responded') {
      const reply = record.data as ModelResponded;
      this.messages.push({
        role: 'assistant',
        content: reply.text,
        ...(reply.toolCalls.length > 0 ? { toolCalls: reply.toolCalls.map(({ callId, name, arguments: args }) => ({ callId, name, arguments: args })) } : {}),
      });
    } else if (record.type === 'tool.settled') {
      const settled = record.data as ToolSettled;
      this.messages.push({ role: 'tool', callId: settled.callId, name: settled.name, content: settled.observation, isError: settled.status === 'error' });
    }
  }

  /** Fold many records in order. */
  addAll(records: Iterable<RecordEnvelope>): this {
    for (const record of records) this.add(record);
    return this;
  }
}
