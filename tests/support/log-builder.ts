import type { RecordEnvelope } from '../../models/envelope.js';

export interface BuiltCall {
  name: string;
  arguments?: Record<string, unknown>;
  status?: 'ok' | 'error';
  errorCode?: string;
  observation?: string;
  truncated?: { omittedBytes: number; artifact: string };
}

/**
 * Builds a session log by hand (the records the runtime would write for user messages, model turns, tool results,
 * verifications and memory), for testing projections on exact, controlled shapes.
 */
export class LogBuilder {
  readonly records: RecordEnvelope[] = [];
  private effect = 1;
  private turnCount = 0;

  constructor(task = 'Fix the failing test', workspace = '/work/repo', readonly actor = 'root') {
    this.push('session.created', { sessionId: 's', task, workspace, provider: { name: 'scripted', model: 'script' }, budgets: { maxTurns: 1000, maxToolCalls: 1000, maxTokens: 1e9, maxWallTimeMs: 1e9 }, tools: ['read', 'write', 'list_dir'], machine: { name: 'session', version: '1' } });
  }

  push(type: string, data: unknown, extra: { corr?: string; cause?: string } = {}): RecordEnvelope {
    const record: RecordEnvelope = { stream: 's', seq: this.records.length + 1, id: `r${this.records.length + 1}`, type, v: 1, at: this.records.length, actor: this.actor, ...extra, data };
    this.records.push(record);
    return record;
  }

  user(text: string): this {
    this.push('user.message', { text });
    return this;
  }

  /** One model turn with its tool calls and their results (results in call order). */
  turn(text: string, calls: BuiltCall[] = []): this {
    const effectId = `${this.actor}:e${this.effect++}`;
    this.turnCount++;
    const request = this.push('effect.requested', { effectId, kind: 'callModel', args: { turn: this.turnCount } });
    const toolCalls = calls.map((call, index) => ({ callId: `${effectId}.${index}`, name: call.name, arguments: call.arguments ?? {} }));
    const reply = this.push('model.responded', { effectId, turn: this.turnCount, text, toolCalls, stopReason: calls.length > 0 ? 'tool_use' : 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, elapsedMs: 1 }, { cause: request.id });
    calls.forEach((call, index) => {
      const callId = toolCalls[index]!.callId;
      const toolEffect = `${this.actor}:e${this.effect++}`;
      this.push('effect.requested', { effectId: toolEffect, kind: 'executeTool', args: { callId, name: call.name, arguments: call.arguments ?? {} } }, { corr: callId, cause: reply.id });
      this.push('tool.settled', { effectId: toolEffect, callId, name: call.name, status: call.status ?? 'ok', ...(call.errorCode ? { errorCode: call.errorCode } : {}), observation: call.observation ?? 'ok', ...(call.truncated ? { truncated: call.truncated } : {}), elapsedMs: 1 }, { corr: callId });
    });
    return this;
  }

  verification(name: string, status: 'passed' | 'failed', summary = ''): this {
    this.push('verification.recorded', { name, status, summary });
    return this;
  }

  memory(type: string, data: Record<string, unknown>): this {
    this.push(type, data);
    return this;
  }
}

/** Lines of filler text (each line unique), with an optional marker in every line. */
export const lines = (count: number, marker = 'line'): string => Array.from({ length: count }, (_, index) => `${marker} ${index + 1}: the quick brown fox jumps over the lazy dog`).join('\n');
