import type { ModelMessage, ModelOptions, ModelRequest, ModelToolDescription } from '../../models/model-contract.js';
import type { ProviderErrorInfo, StopReason, TokenUsage, ToolCall } from '../../models/model.records.js';
import type { ModelProvider } from '../providers/provider.js';
import type { EffectContext, EffectExecutor, EffectRequest, Settlement } from './effect.js';

/** What the model-call executor needs to know about the actor that asked: its messages, tools and role. */
export interface ModelCallSource {
  messages(actor: string): readonly ModelMessage[];
  tools(actor: string): ModelToolDescription[];
  role(actor: string): string | undefined;
}

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
 * Executes `callModel`: builds the `ModelRequest` from the actor's conversation, streams the provider (forwarding
 * deltas live), assigns core call ids to complete tool intents, and settles with `model.responded` or
 * `model.failed`. A provider failure never becomes a tool error.
 */
export const createCallModelExecutor = ({ provider, source, options = {} }: CallModelOptions): EffectExecutor => ({
  resumePolicy: () => 'rerun-after-check',
  async execute(request, context) {
    const turn = Number(request.args.turn);
    const role = source.role(request.actor);
    const modelRequest: ModelRequest = {
      runId: context.sessionId,
      turnId: request.effectId,
      turn,
      ...(role === undefined ? {} : { role }),
      ...(provider.model === undefined ? {} : { model: provider.model }),
      messages: source.messages(request.actor).slice(),
      tools: source.tools(request.actor),
      options,
      signal: context.signal,
    };
    let assembled: Assembled;
    try {
      assembled = await assemble(provider, modelRequest, request, context);
    } catch (error) {
      if (context.signal.aborted) return failed(request, turn, { code: 'cancelled', message: 'the model call was cancelled', retryable: false }, context);
      return failed(request, turn, { code: 'unknown', message: (error as Error).message ?? String(error), retryable: false }, context);
    }
    if (assembled.error) return failed(request, turn, assembled.error, context);
    if (context.signal.aborted) return failed(request, turn, { code: 'cancelled', message: 'the model call was cancelled', retryable: false }, context);
    if (!assembled.stopReason) return failed(request, turn, { code: 'network', message: 'the stream ended without a finish event', retryable: true }, context);
    return {
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
    };
  },
});
