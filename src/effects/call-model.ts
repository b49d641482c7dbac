import type { ModelMessage, ModelOptions, ModelRequest, ModelToolDescription } from '../../models/model-contract.js';
import type { ProviderErrorInfo, StopReason, TokenUsage, ToolCall } from '../../models/model.records.js';
import type { ModelProvider } from '../providers/provider.js';
import type { EffectContext, EffectExecutor, EffectRequest, FactDraft, Settlement } from './effect.js';

/** One attempt at one model call: which actor, which turn, which effect, and which try (from 1). */
export interface ModelCallAttempt {
  actor: string;
  turn: number;
  effectId: string;
  attempt: number;
}

/** The model input for one attempt and the facts that record how it was built (e.g. `context.projected`). */
export interface PreparedModelInput {
  messages: ModelMessage[];
  tools: ModelToolDescription[];
  facts: FactDraft[];
  /**
   * Resolves once everything the facts reference (the input blob) is durable. It runs alongside the model call;
   * the executor awaits it before settling, so no durable record ever points at a blob that is not.
   */
  ready?: Promise<void>;
}

/**
 * What the model-call executor needs to know about the actor that asked: its messages, tools and role. A source
 * with `prepare` builds (and records) the input per attempt; `compact` is called after the provider reported a
 * context-length error and makes the next `prepare` smaller, resolving false when nothing more can be compacted.
 */
export interface ModelCallSource {
  messages(actor: string): readonly ModelMessage[];
  tools(actor: string): ModelToolDescription[];
  role(actor: string): string | undefined;
  prepare?(attempt: ModelCallAttempt): Promise<PreparedModelInput>;
  compact?(actor: string): Promise<boolean>;
}

/**
 * The input for one attempt: `source.prepare` when the source has it, else its plain messages and tools with no
 * facts. A retry loop calls this once per attempt so every attempt's projection is recorded.
 */
export const prepareModelInput = async (source: ModelCallSource, attempt: ModelCallAttempt): Promise<PreparedModelInput> =>
  source.prepare ? source.prepare(attempt) : { messages: source.messages(attempt.actor).slice(), tools: source.tools(attempt.actor), facts: [] };

export interface CallModelOptions {
  provider: ModelProvider;
  source: ModelCallSource;
  options?: ModelOptions;
}

interface Assembled {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  usage: TokenUsage;
  stopReason: StopReason | undefined;
  error: ProviderErrorInfo | undefined;
}

const failed = (request: EffectRequest, turn: number, error: ProviderErrorInfo, context: EffectContext): Settlement => ({
  type: 'model.failed',
  data: { effectId: request.effectId, turn, error, elapsedMs: context.elapsedMs() },
});

const withFacts = (settlement: Settlement, facts: readonly FactDraft[]): Settlement => (facts.length > 0 ? { ...settlement, facts: [...(settlement.facts ?? []), ...facts] } : settlement);

const assemble = async (provider: ModelProvider, modelRequest: ModelRequest, request: EffectRequest, context: EffectContext): Promise<Assembled> => {
  const state: Assembled = { text: '', reasoning: '', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, stopReason: undefined, error: undefined };
  for await (const event of provider.stream(modelRequest)) {
    if (event.type === 'text-delta') {
      state.text += event.text;
      context.live({ type: 'model.delta', actor: request.actor, effectId: request.effectId, channel: 'text', text: event.text });
    } else if (event.type === 'reasoning-delta') {
      state.reasoning += event.text;
      context.live({ type: 'model.delta', actor: request.actor, effectId: request.effectId, channel: 'reasoning', text: event.text });
    } else if (event.type === 'tool-intent') {
      const callId = `${request.effectId}.${state.toolCalls.length}`;
      state.toolCalls.push({ callId, name: event.name, arguments: event.arguments, ...(event.providerCallId ? { providerCallId: event.providerCallId } : {}) });
    } else if (event.type === 'usage') {
      state.usage = event.usage;
    } else if (event.type === 'finished') {
      state.stopReason = event.stopReason;
    } else if (event.type === 'error') {
      state.error = event.error;
      break;
    }
  }
  return state;
};

/**
 * Executes `callModel`: prepares the input through the source (the context policy records a `context.projected`
 * fact, written in the settling batch), streams the provider (forwarding deltas live), assigns core call ids to
 * complete tool intents, and settles with `model.responded` or `model.failed`. A provider failure never becomes a
 * tool error.
 */
export const createCallModelExecutor = ({ provider, source, options = {} }: CallModelOptions): EffectExecutor => ({
  resumePolicy: () => 'rerun-after-check',
  async execute(request, context) {
    const turn = Number(request.args.turn);
    const role = source.role(request.actor);
    const prepared = await prepareModelInput(source, { actor: request.actor, turn, effectId: request.effectId, attempt: 1 });
    const facts = prepared.facts.map((fact) => ({ at: context.now(), ...fact }));
    const modelRequest: ModelRequest = {
      runId: context.sessionId,
      turnId: request.effectId,
      turn,
      ...(role === undefined ? {} : { role }),
      ...(provider.model === undefined ? {} : { model: provider.model }),
      messages: prepared.messages,
      tools: prepared.tools,
      options,
      signal: context.signal,
    };
    let assembled: Assembled;
    try {
      assembled = await assemble(provider, modelRequest, request, context);
    } catch (error) {
      await prepared.ready;
      if (context.signal.aborted) return withFacts(failed(request, turn, { code: 'cancelled', message: 'the model call was cancelled', retryable: false }, context), facts);
      return withFacts(failed(request, turn, { code: 'unknown', message: (error as Error).message ?? String(error), retryable: false }, context), facts);
    }
    await prepared.ready;
    if (assembled.error) return withFacts(failed(request, turn, assembled.error, context), facts);
    if (context.signal.aborted) return withFacts(failed(request, turn, { code: 'cancelled', message: 'the model call was cancelled', retryable: false }, context), facts);
    if (!assembled.stopReason) return withFacts(failed(request, turn, { code: 'network', message: 'the stream ended without a finish event', retryable: true }, context), facts);
    return withFacts({
      type: 'model.responded',
      data: {
        effectId: request.effectId,
        turn,
        text: assembled.text,
        ...(assembled.reasoning ? { reasoning: assembled.reasoning } : {}),
        toolCalls: assembled.toolCalls,
        stopReason: assembled.stopReason,
        usage: assembled.usage,
        elapsedMs: context.elapsedMs(),
      },
    }, facts);
  },
});
