import type { ModelEvent } from '../../models/model-contract.js';
import type { ProviderErrorInfo } from '../../models/model.records.js';
import { providerError } from './provider-errors.js';

type ToolIntentDelta = Extract<ModelEvent, { type: 'tool-intent-delta' }>;
type ToolIntent = Extract<ModelEvent, { type: 'tool-intent' }>;

interface PartialCall {
  index: number;
  providerCallId: string | undefined;
  name: string | undefined;
  chunks: string[];
  /** Arguments a vendor sent whole with the call's start (used when no argument deltas follow). */
  initial: Record<string, unknown> | undefined;
}

const preview = (raw: string): string => (raw.length > 120 ? `${raw.slice(0, 120)}…` : raw);

/**
 * Assembles streamed tool calls, one buffer per vendor index, so interleaved argument chunks of parallel calls never
 * mix. The vendor id and name are taken from the first chunk that carries them (later repeats are ignored). A call
 * is proposed only by `complete`, after the vendor's end-of-call signal, never when a prefix happens to parse.
 * Empty arguments mean `{}`; arguments that are not a JSON object are a retryable `malformed_tool_call` (rein does
 * not repair them: a fresh sample is the honest fix, and the tool pipeline only ever sees complete objects).
 * Request-scoped: one assembler per model call.
 */
export class ToolCallAssembler {
  private readonly calls = new Map<number, PartialCall>();

  /** Record one chunk of call `index` and return the delta event to stream. */
  delta(index: number, part: { providerCallId?: string | undefined; name?: string | undefined; argumentsDelta: string; initial?: Record<string, unknown> }): ToolIntentDelta {
    let call = this.calls.get(index);
    if (!call) {
      call = { index, providerCallId: undefined, name: undefined, chunks: [], initial: undefined };
      this.calls.set(index, call);
    }
    if (call.providerCallId === undefined && part.providerCallId) call.providerCallId = part.providerCallId;
    if (call.name === undefined && part.name) call.name = part.name;
    if (part.initial !== undefined && Object.keys(part.initial).length > 0) call.initial = part.initial;
    if (part.argumentsDelta.length > 0) call.chunks.push(part.argumentsDelta);
    return {
      type: 'tool-intent-delta',
      index,
      ...(call.providerCallId === undefined ? {} : { providerCallId: call.providerCallId }),
      ...(call.name === undefined ? {} : { name: call.name }),
      argumentsDelta: part.argumentsDelta,
    };
  }

  /** True when call `index` has started and not been completed. */
  has(index: number): boolean {
    return this.calls.has(index);
  }

  /** How many calls are still open. */
  get open(): number {
    return this.calls.size;
  }

  /** Close call `index`: its complete intent, or a `malformed_tool_call` error. */
  complete(index: number): ToolIntent | ProviderErrorInfo {
    const call = this.calls.get(index);
    this.calls.delete(index);
    if (!call) return providerError('malformed_tool_call', `the stream closed tool call ${index}, which never started`);
    const label = `${call.name ?? '(no name)'}${call.providerCallId ? ` (${call.providerCallId})` : ''}`;
    if (!call.name) return providerError('malformed_tool_call', `tool call ${label} has no tool name`);
    const raw = call.chunks.join('');
    let parsed: unknown = call.initial ?? {};
    if (raw.trim().length > 0) {
      try {
        parsed = JSON.parse(raw);
      } catch (error) {
        return providerError('malformed_tool_call', `tool call ${label} has arguments that are not valid JSON (${(error as Error).message}): ${preview(raw)}`);
      }
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return providerError('malformed_tool_call', `tool call ${label} has arguments that are not a JSON object: ${preview(raw)}`);
    }
    return { type: 'tool-intent', ...(call.providerCallId === undefined ? {} : { providerCallId: call.providerCallId }), name: call.name, arguments: parsed as Record<string, unknown> };
  }

  /** Close every open call in index order (OpenAI proposes all calls at the finish reason). */
  completeAll(): Array<ToolIntent | ProviderErrorInfo> {
    return [...this.calls.keys()].sort((left, right) => left - right).map((index) => this.complete(index));
  }
}

/** True when `value` is a completed intent rather than an error. */
export const isToolIntent = (value: ToolIntent | ProviderErrorInfo): value is ToolIntent => (value as ToolIntent).type === 'tool-intent';
