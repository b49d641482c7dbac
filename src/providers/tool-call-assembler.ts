import type { ModelEvent } from '../../models/model-contract.js';
import type { ProviderErrorInfo } from '../../models/model.records.js';
import { providerError } from './provider-errors.js';

type ToolIntentDelta = Extract<ModelEvent, { type: 'tool-intent-delta' }>;
type ToolIntent = Extract<ModelEvent, { type: 'tool-intent' }>;

interface PartialCall {
  /** The index its deltas are streamed under: the vendor's, or a fresh one for a new call sent at a used index. */
  index: number;
  /** Its order of arrival (calls at one index are completed in it). */
  seq: number;
  providerCallId: string | undefined;
  name: string | undefined;
  chunks: string[];
  /** Arguments a vendor sent whole with the call's start (used when no argument deltas follow). */
  initial: Record<string, unknown> | undefined;
}

const preview = (raw: string): string => (raw.length > 120 ? `${raw.slice(0, 120)}…` : raw);

/**
 * Assembles streamed tool calls, one buffer per vendor index, so interleaved argument chunks of parallel calls never
 * mix. The vendor id and name are taken from the first chunk that carries them (later repeats are ignored), but a
 * chunk with a *different* id at an index whose call already has one starts a new call (some OpenAI-compatible
 * servers send parallel calls all at index 0, each with its own id and whole arguments: trial 6 F26). A call
 * is proposed only by `complete`, after the vendor's end-of-call signal, never when a prefix happens to parse.
 * Empty arguments mean `{}`; arguments that are not a JSON object are a retryable `malformed_tool_call` (rein does
 * not repair them: a fresh sample is the honest fix, and the tool pipeline only ever sees complete objects).
 * Request-scoped: one assembler per model call.
 */
export class ToolCallAssembler {
  /** The open calls, by the vendor index whose chunks go to them now. */
  private readonly calls = new Map<number, PartialCall>();
  /** Calls a new id at their index replaced: complete, waiting for the end of the message. */
  private readonly superseded: PartialCall[] = [];
  private nextSeq = 0;
  private highestIndex = -1;

  /** Record one chunk of call `index` and return the delta event to stream. */
  delta(index: number, part: { providerCallId?: string | undefined; name?: string | undefined; argumentsDelta: string; initial?: Record<string, unknown> }): ToolIntentDelta {
    let call = this.calls.get(index);
    const replaced = call !== undefined && call.providerCallId !== undefined && part.providerCallId !== undefined && part.providerCallId !== '' && part.providerCallId !== call.providerCallId;
    if (replaced) this.superseded.push(call!);
    if (!call || replaced) {
      // A new call at a used index streams under an index of its own, so its deltas are not shown as the first's.
      call = { index: replaced ? this.highestIndex + 1 : index, seq: this.nextSeq++, providerCallId: undefined, name: undefined, chunks: [], initial: undefined };
      this.calls.set(index, call);
    }
    this.highestIndex = Math.max(this.highestIndex, index, call.index);
    if (call.providerCallId === undefined && part.providerCallId) call.providerCallId = part.providerCallId;
    if (call.name === undefined && part.name) call.name = part.name;
    if (part.initial !== undefined && Object.keys(part.initial).length > 0) call.initial = part.initial;
    if (part.argumentsDelta.length > 0) call.chunks.push(part.argumentsDelta);
    return {
      type: 'tool-intent-delta',
      index: call.index,
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
    return this.calls.size + this.superseded.length;
  }

  /** Close call `index`: its complete intent, or a `malformed_tool_call` error. */
  complete(index: number): ToolIntent | ProviderErrorInfo {
    const call = this.calls.get(index);
    this.calls.delete(index);
    if (!call) return providerError('malformed_tool_call', `the stream closed tool call ${index}, which never started`);
    return this.finish(call);
  }

  private finish(call: PartialCall): ToolIntent | ProviderErrorInfo {
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

  /** Close every open call in index order, calls sent at one index in their order (OpenAI proposes all calls at the finish reason). */
  completeAll(): Array<ToolIntent | ProviderErrorInfo> {
    const all = [...this.superseded.splice(0), ...this.calls.values()].sort((left, right) => left.index - right.index || left.seq - right.seq);
    this.calls.clear();
    return all.map((call) => this.finish(call));
  }
}

/** True when `value` is a completed intent rather than an error. */
export const isToolIntent = (value: ToolIntent | ProviderErrorInfo): value is ToolIntent => (value as ToolIntent).type === 'tool-intent';
