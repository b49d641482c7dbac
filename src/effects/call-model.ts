import { normaliseArguments, wellFormed } from '../tools/argument-hygiene.js';
import type { ModelEvent, ModelMessage, ModelOptions, ModelRequest, ModelToolDescription } from '../../models/model-contract.js';
import type { ModelAttempted, ProviderErrorInfo, StopReason, TokenUsage, ToolCall } from '../../models/model.records.js';
import type { ModelProvider } from '../providers/provider.js';
import type { CallSpec } from '../../models/call-spec.js';
import type { EffectContext, EffectExecutor, EffectRequest, FactDraft, Settlement } from './effect.js';
import { costBudgetOutputTokens, type ModelCallBudget } from '../session/cost-budget.js';
import { ReinError } from '../host/host-errors.js';
import { isAborted } from './abort-hooks.js';
import { isAbandoned, ProviderEvents } from './provider-events.js';
import { decideAfterFailure, defaultRetryPolicy, fallbackCodes, sleep as defaultSleep, type RetryDecision, type RetryPolicy } from './model-retry.js';

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
  /** Where the stable parts of `messages` end (see `ModelRequest.cacheBreakpoints`). */
  cacheBreakpoints?: readonly number[];
  /** The input's tokens as the context policy counted them (a cost budget's worst case starts from it). */
  inputTokens?: number;
  facts: FactDraft[];
  /** Blobs the facts reference (the exact input): written in the same batch as the facts, so never dangling. */
  blobs?: Uint8Array[];
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
  /** Build (and record) the input of one attempt; without it the executor sends `messages` and `tools` as they are. */
  prepare?(attempt: ModelCallAttempt): Promise<PreparedModelInput>;
  /**
   * Whether `prepare` for `actor`'s next call is pure work on the session's views (no hook to run, no environment to
   * capture), so it may run while the call's request is being written. Absent: it is.
   */
  preparesPurely?(actor: string): boolean;
  /** The typed contract of this call (harness-typestate CallSpec) for the actor that asked, recorded in `model.responded` for the turn. */
  callSpec?(effectId: string, actor: string): CallSpec;
  /**
   * Optional compaction hook, called once per model call after a `context_length` error: make the next input for
   * `actor` smaller and resolve true to have the call tried again, false (or throw) to let it fail.
   */
  compact?(actor: string, signal: AbortSignal): Promise<boolean>;
  /**
   * Review a complete reply before it settles (hooks and guardrails): the turn's `pre_flight` guardrail decision when
   * it has tool calls, a `stop` hook's continuation when it has none. What it returns is recorded in `model.responded`
   * (an input, so replay reads it and never runs a hook) and its facts go into the settling batch.
   */
  review?(reply: { actor: string; effectId: string; turn: number; text: string; toolCalls: readonly ToolCall[]; stopReason: StopReason }, cancel: { readonly signal: AbortSignal }): Promise<ReplyReview>;
}

/** What reviewing a reply decided, and the facts that record it. */
export interface ReplyReview {
  continuation?: { reason: string; by?: string };
  /** A final answer checked against the session's output schema. */
  output?: { ok: true; value: unknown } | { ok: false; errors: string[] };
  preFlight?: { verdict: 'pass' | 'block'; by?: string; reason?: string };
  facts: FactDraft[];
}

/**
 * The input for one attempt: `source.prepare` when the source has it, else its plain messages and tools with no
 * facts. A retry loop calls this once per attempt so every attempt's projection is recorded.
 */
export const prepareModelInput = (source: ModelCallSource, attempt: ModelCallAttempt): Promise<PreparedModelInput> => {
  // Not an async function returning the source's promise: that adopts it through two more microtask turns.
  try {
    return source.prepare ? source.prepare(attempt) : Promise.resolve({ messages: source.messages(attempt.actor).slice(), tools: source.tools(attempt.actor), facts: [] });
  } catch (error) {
    return Promise.reject(error);
  }
};

export interface CallModelOptions {
  provider: ModelProvider;
  /**
   * Providers to fall back to, in order: when `provider` still fails with an availability error (rate limit,
   * overloaded, server error, network, timeout, quota) after its retry budget, the call moves to the next one, which
   * gets a retry budget of its own. Every attempt records which provider answered.
   */
  fallbacks?: readonly ModelProvider[];
  source: ModelCallSource;
  options?: ModelOptions;
  /** Retry budget (defaults: `defaultRetryPolicy`). */
  retry?: Partial<RetryPolicy>;
  /** The runtime's randomness for backoff jitter (default `Math.random`); never the machine's. */
  random?: () => number;
  /** Waits between attempts; resolves false when the signal fired first (default: a timer). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<boolean>;
  /** The session's cost budget, asked before each attempt (absent: none). */
  budget?: ModelCallBudget;
}

interface Attempt {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  usage: TokenUsage;
  /** Whether the endpoint sent a usage event (many local servers never do). */
  usageReported: boolean;
  stopReason: StopReason | undefined;
  /** The vendor's stop reason when no core reason maps it (`stopReason` is then `unknown`). */
  rawStopReason?: string;
  error: ProviderErrorInfo | undefined;
  model: string | undefined;
  requestId: string | undefined;
}

/** rein's own count of a call's tokens when the endpoint reports none: the request's and the reply's characters / 4. */
const estimatedUsage = (request: ModelRequest, text: string, reasoning: string, toolCalls: readonly unknown[]): TokenUsage => {
  const sent = request.messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0) + JSON.stringify(request.tools ?? []).length;
  const got = text.length + reasoning.length + (toolCalls.length > 0 ? JSON.stringify(toolCalls).length : 0);
  return { inputTokens: Math.ceil(sent / 4), outputTokens: Math.ceil(got / 4), estimated: true };
};

/** How long later model calls start at the fallback that answered, before trying the first provider again. */
export const fallbackStickyMs = 60_000;

const blobsOf = (prepared: PreparedModelInput): { blobs?: Uint8Array[] } => (prepared.blobs && prepared.blobs.length > 0 ? { blobs: prepared.blobs } : {});

const knownEventTypes: ReadonlySet<string> = new Set(['started', 'text-delta', 'reasoning-delta', 'tool-intent-delta', 'tool-intent', 'usage', 'finished', 'error']);
const isUsage = (value: unknown): value is TokenUsage =>
  typeof value === 'object' && value !== null && typeof (value as TokenUsage).inputTokens === 'number' && typeof (value as TokenUsage).outputTokens === 'number';

const cancelled: ProviderErrorInfo = { code: 'cancelled', message: 'the model call was cancelled', retryable: false };

const malformed = (message: string): ProviderErrorInfo => ({ code: 'malformed_tool_call', message, retryable: true });

/**
 * Stream one attempt, forwarding deltas live; a thrown provider error becomes an `unknown` error, never a tool error.
 * The stream is checked as it comes (any provider's, a host's own included): an event of no known type is an
 * `unknown` error; a tool intent without a name or an arguments object, one sent after `finished`, and argument
 * deltas of a call whose `tool-intent` never came are `malformed_tool_call` (nothing of the reply runs; retryable,
 * as a fresh sample is the fix); after `finished` only `usage` is still taken, other events are ignored; a reply
 * that finished with `content_filter` is a `content_filter` error (as the built-in adapters report it), never an answer.
 */
const attemptOnce = async (provider: ModelProvider, modelRequest: ModelRequest, request: EffectRequest, context: EffectContext): Promise<Attempt> => {
  const state: Attempt = { text: '', reasoning: '', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, usageReported: false, stopReason: undefined, error: undefined, model: undefined, requestId: undefined };
  const argumentsLength = new Map<number, number>();
  const fail = (error: ProviderErrorInfo) => (state.error = error);
  try {
    const events = new ProviderEvents(provider.stream(modelRequest) as AsyncIterable<unknown>, context);
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) break;
        const raw = next.value;
          const type = typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined;
          if (state.stopReason !== undefined) {
            // The reply is over: its usage may still come; a tool call may not (it would run unasked-for); the rest is dropped.
            if (type === 'usage' && isUsage((raw as { usage?: unknown }).usage)) {
              state.usage = (raw as { usage: TokenUsage }).usage;
              state.usageReported = true;
            } else if (type === 'tool-intent' || type === 'tool-intent-delta') {
              fail(malformed(`the ${provider.name} provider sent a ${type} after its finished event; nothing of the reply was run`));
              break;
            }
            continue;
          }
          if (!knownEventTypes.has(type as string)) {
            fail({ code: 'unknown', message: `the ${provider.name} provider sent an event rein does not know (type ${JSON.stringify(type) ?? 'undefined'}): expected ${[...knownEventTypes].join(', ')}`, retryable: false });
            break;
          }
          const event = raw as ModelEvent;
          if (event.type === 'text-delta') {
            state.text += event.text;
            context.live({ type: 'model.delta', actor: request.actor, effectId: request.effectId, channel: 'text', text: event.text });
          } else if (event.type === 'reasoning-delta') {
            state.reasoning += event.text;
            context.live({ type: 'model.delta', actor: request.actor, effectId: request.effectId, channel: 'reasoning', text: event.text });
          } else if (event.type === 'tool-intent-delta') {
            const length = (argumentsLength.get(event.index) ?? 0) + event.argumentsDelta.length;
            argumentsLength.set(event.index, length);
            context.live({ type: 'model.intent', actor: request.actor, effectId: request.effectId, index: event.index, ...(event.name ? { name: event.name } : {}), argumentsLength: length });
          } else if (event.type === 'tool-intent') {
            if (typeof event.name !== 'string' || event.name === '' || typeof event.arguments !== 'object' || event.arguments === null || Array.isArray(event.arguments)) {
              fail(malformed(`the ${provider.name} provider sent a tool-intent without a name or an arguments object (${JSON.stringify(event).slice(0, 160)})`));
              break;
            }
            const callId = `${request.effectId}.${state.toolCalls.length}`;
            // Recorded exactly as the runtime will use it: values no log can hold are replaced, named, and refused later.
            const { value, problems } = normaliseArguments(event.arguments);
            const call: ToolCall = { callId, name: wellFormed(event.name), arguments: value };
            if (event.providerCallId) call.providerCallId = wellFormed(event.providerCallId);
            if (problems.length > 0) call.invalid = problems;
            state.toolCalls.push(call);
          } else if (event.type === 'started') {
            state.model = event.model;
            state.requestId = event.requestId;
          } else if (event.type === 'usage') {
            state.usage = event.usage;
            state.usageReported = true;
          } else if (event.type === 'finished') {
            state.stopReason = event.stopReason;
            if (event.rawStopReason !== undefined) state.rawStopReason = wellFormed(event.rawStopReason);
          } else if (event.type === 'error') {
            state.error = event.error;
            break;
          }
      }
    } finally {
      const closing = events.close();
      if (closing) await closing;
    }
  } catch (error) {
    state.error = isAbandoned(error) ? { ...cancelled, message: error.message } : isAborted(context) ? cancelled : { code: 'unknown', message: `the ${provider.name} provider threw: ${(error as Error).message ?? String(error)}`, retryable: false };
  }
  if (!state.error && isAborted(context)) state.error = cancelled;
  if (!state.error && !state.stopReason) state.error = { code: 'network', message: 'the stream ended without a finish event', retryable: true };
  // Every call the stream started (its argument deltas, one index per call) must have been completed by a tool-intent.
  if (!state.error && argumentsLength.size > state.toolCalls.length) {
    const started = [...argumentsLength.keys()].sort((a, b) => a - b);
    state.error = malformed(`the ${provider.name} provider streamed arguments for ${started.length} tool call${started.length === 1 ? '' : 's'} (index ${started.join(', ')}) but completed ${state.toolCalls.length} with a tool-intent; nothing of the reply was run`);
  }
  if (!state.error && state.stopReason === 'content_filter') {
    state.error = { code: 'content_filter', message: `the ${provider.name} provider stopped the reply with its content filter${state.text ? ` after ${state.text.length} characters` : ''}`, retryable: false };
  }
  return state;
};

/**
 * Executes `callModel`: prepares each attempt's input through the source (the context policy records a
 * `context.projected` fact per attempt), streams the provider (forwarding deltas live), assigns core call ids
 * (`<effectId>.<n>`) to complete tool intents, keeping the vendor's id as `providerCallId`, and settles with
 * `model.responded` or `model.failed`. Failed attempts are retried by `decideAfterFailure` (jittered backoff,
 * `retry-after`, one compaction for `context_length`); every attempt is a `model.attempted` fact (a retried one is
 * appended before the wait, the last one in the settling batch). Retry delays are runtime facts, not inputs, so
 * replay stays exact. A provider failure never becomes a tool error.
 */
export const createCallModelExecutor = ({ provider: primary, fallbacks = [], source, options = {}, retry = {}, random = Math.random, sleep = defaultSleep, budget }: CallModelOptions): EffectExecutor => {
  const policy: RetryPolicy = { ...defaultRetryPolicy, ...retry };
  const chain: readonly ModelProvider[] = [primary, ...fallbacks];
  // After a fallback answered, later calls start at that link for a while instead of waiting out the same outage
  // on every call; then they try the first provider again.
  let sticky = { link: 0, until: 0 };
  const labelOf = (provider: ModelProvider): string => (provider.model ? `${provider.name}/${provider.model}` : provider.name);
  /** The first attempt's input (also what `prepare` builds while the call's request is being written). */
  const firstInput = (request: EffectRequest): Promise<PreparedModelInput> => prepareModelInput(source, { actor: request.actor, turn: Number(request.args.turn), effectId: request.effectId, attempt: 1 });
  const requestFor = async (provider: ModelProvider, request: EffectRequest, context: EffectContext, attempt: number, early: Promise<PreparedModelInput> | undefined): Promise<{ modelRequest: ModelRequest; prepared: PreparedModelInput }> => {
    const role = source.role(request.actor);
    const turn = Number(request.args.turn);
    const prepared = await (early ?? prepareModelInput(source, { actor: request.actor, turn, effectId: request.effectId, attempt }));
    const modelRequest: ModelRequest = {
      runId: context.sessionId,
      turnId: request.effectId,
      turn,
      actor: request.actor,
      attempt,
      ...(role === undefined ? {} : { role }),
      ...(provider.model === undefined ? {} : { model: provider.model }),
      messages: prepared.messages,
      tools: prepared.tools,
      ...(prepared.cacheBreakpoints && prepared.cacheBreakpoints.length > 0 ? { cacheBreakpoints: prepared.cacheBreakpoints } : {}),
      options,
      // Made on first read: a provider that never looks at its signal (a scripted one) costs no AbortSignal.
      get signal() {
        return context.signal;
      },
    };
    return { modelRequest, prepared };
  };
  const factOf = (provider: ModelProvider, request: EffectRequest, attempt: number, result: Attempt, durationMs: number, failure?: { error: ProviderErrorInfo; next: RetryDecision | { decision: 'fallback'; to: ModelProvider } }): ModelAttempted => {
    const model = result.model ?? provider.model;
    // Built key by key, in the order the record keeps: a literal of conditional spreads takes V8's slow path per call.
    const fact: ModelAttempted = { effectId: request.effectId, attempt, provider: provider.name } as ModelAttempted;
    if (model) fact.model = model;
    if (result.requestId) fact.requestId = result.requestId;
    fact.outcome = failure ? 'error' : 'ok';
    if (failure) {
      fact.errorCode = failure.error.code;
      fact.message = failure.error.message;
      if (failure.error.retryAfterMs !== undefined) fact.retryAfterMs = failure.error.retryAfterMs;
    }
    fact.decision = failure?.next.decision ?? 'done';
    if (failure?.next.decision === 'retry') fact.delayMs = failure.next.delayMs;
    if (failure?.next.decision === 'fallback') fact.fallbackTo = { provider: failure.next.to.name, ...(failure.next.to.model ? { model: failure.next.to.model } : {}) };
    fact.durationMs = durationMs;
    return fact;
  };
  return {
    resumePolicy: () => 'rerun-after-check',
    // The first attempt's input (projection, request encoding, the input blob's hash) may be built while the call's
    // request is written: the call itself starts only in `execute`, once it is.
    prepare: (request) => (source.preparesPurely?.(request.actor) === false ? undefined : firstInput(request)),
    async execute(request, context, early) {
      const turn = Number(request.args.turn);
      const firstStarted = context.now();
      /** The facts of one attempt: how its input was built, then how it ended. */
      const attemptFacts = (prepared: PreparedModelInput, fact: ModelAttempted): FactDraft[] => [
        ...prepared.facts.map((projected) => ({ at: context.now(), ...projected })),
        { type: 'model.attempted', data: fact, at: context.now() },
      ];
      let compacted = false;
      // The order this call tries the chain in: from the held fallback (if one answered less than a minute ago)
      // round to the links before it, each at most once, so the first provider is still tried when the held one fails.
      const start = firstStarted < sticky.until ? sticky.link : 0;
      const order = chain.map((_, index) => (start + index) % chain.length);
      let position = 0;
      let linkStarted = firstStarted;
      let linkFirstAttempt = 1;
      for (let attempt = 1; ; attempt++) {
        const link = order[position]!;
        const provider = chain[link]!;
        const started = context.now();
        const { modelRequest, prepared } = await requestFor(provider, request, context, attempt, attempt === 1 ? (early as Promise<PreparedModelInput> | undefined) : undefined);
        if (budget?.limited) {
          // Under a cost budget a call's output is capped, so its worst case is bounded; the budget admits it or not.
          const maxOutputTokens = options.maxOutputTokens ?? costBudgetOutputTokens;
          modelRequest.options = { ...options, maxOutputTokens };
          const inputTokens = prepared.inputTokens ?? estimatedUsage(modelRequest, '', '', []).inputTokens;
          const stop = budget.admit({ effectId: request.effectId, actor: request.actor, provider: provider.name, model: provider.model, inputTokens, maxOutputTokens });
          if (stop) {
            if (!context.pause) throw new ReinError('COST_BUDGET_REACHED', `the cost budget of $${stop.limitUsd} could be exceeded by this model call`);
            context.pause(stop);
            return { type: 'model.failed', data: { effectId: request.effectId, turn, error: cancelled, elapsedMs: context.elapsedMs() } };
          }
        }
        const result = await attemptOnce(provider, modelRequest, request, context);
        const durationMs = context.now() - started;
        if (!result.error) {
          const { text, reasoning, toolCalls } = result;
          // An endpoint that reports no usage — or 0 input tokens, which no request rein sends can cost (a system
          // prompt and a task at least; several local servers and proxies send zeros) — would make every turn cost 0
          // tokens and the token budget void: rein counts what it sent and got instead (4 characters a token), marked
          // as its own estimate.
          const usage = result.usageReported && result.usage.inputTokens > 0 ? result.usage : estimatedUsage(modelRequest, text, reasoning, toolCalls);
          // Hold a fallback only when this call had to move to it: a call that merely started there does not renew the
          // hold, so the first provider is tried again a minute after the outage that caused it.
          if (position > 0) sticky = link === 0 ? { link: 0, until: 0 } : { link, until: context.now() + fallbackStickyMs };
          const callSpec = source.callSpec?.(request.effectId, request.actor);
          const review = source.review ? await source.review({ actor: request.actor, effectId: request.effectId, turn, text, toolCalls, stopReason: result.stopReason as StopReason }, context) : undefined;
          // Built key by key, in the order the record keeps: a literal of conditional spreads takes V8's slow path per call.
          const data: Record<string, unknown> = { effectId: request.effectId, turn, text: wellFormed(text) };
          if (reasoning) data.reasoning = wellFormed(reasoning);
          data.toolCalls = toolCalls;
          data.stopReason = result.stopReason as StopReason;
          if (result.rawStopReason !== undefined) data.rawStopReason = result.rawStopReason;
          data.usage = usage;
          data.elapsedMs = context.elapsedMs();
          if (callSpec) data.callSpec = callSpec;
          if (review?.continuation) data.continuation = review.continuation;
          if (review?.preFlight) data.preFlight = review.preFlight;
          if (review?.output) data.output = review.output;
          const facts = attemptFacts(prepared, factOf(provider, request, attempt, result, durationMs));
          if (review && review.facts.length > 0) facts.push(...review.facts);
          const settlement: Settlement = { type: 'model.responded', data, facts };
          if (prepared.blobs && prepared.blobs.length > 0) settlement.blobs = prepared.blobs;
          return settlement;
        }
        const error = isAborted(context) ? (result.error?.code === 'cancelled' ? result.error : cancelled) : result.error;
        let next: RetryDecision | { decision: 'fallback'; to: ModelProvider } =
          error.code === 'cancelled' ? { decision: 'fail' } : decideAfterFailure({ error, attempt: attempt - linkFirstAttempt + 1, elapsedMs: context.now() - linkStarted, policy, random, canCompact: !compacted && source.compact !== undefined });
        if (next.decision === 'compact') {
          compacted = true;
          if (!(await source.compact!(request.actor, context.signal).catch(() => false))) next = { decision: 'fail' };
        }
        if (next.decision === 'fail' && fallbackCodes.has(error.code) && position + 1 < order.length && !isAborted(context)) next = { decision: 'fallback', to: chain[order[position + 1]!]! };
        const facts = attemptFacts(prepared, factOf(provider, request, attempt, result, durationMs, { error, next }));
        if (next.decision === 'fail') {
          const finalError = attempt > 1 ? { ...error, message: `${error.message} (gave up after ${attempt} attempts)` } : error;
          return { type: 'model.failed', data: { effectId: request.effectId, turn, error: finalError, elapsedMs: context.elapsedMs() }, facts, ...blobsOf(prepared) };
        }
        await context.recordFacts(facts, { sync: false, ...blobsOf(prepared) });
        if (isAborted(context)) return { type: 'model.failed', data: { effectId: request.effectId, turn, error: cancelled, elapsedMs: context.elapsedMs() } };
        if (next.decision === 'fallback') {
          context.live({ type: 'model.fallback', actor: request.actor, effectId: request.effectId, attempt, code: error.code, message: error.message, from: labelOf(provider), to: labelOf(next.to) });
          position++;
          linkStarted = context.now();
          linkFirstAttempt = attempt + 1;
        } else if (next.decision === 'retry') {
          context.live({ type: 'model.retrying', actor: request.actor, effectId: request.effectId, attempt, code: error.code, message: error.message, delayMs: next.delayMs });
          if (!(await sleep(next.delayMs, context.signal))) return { type: 'model.failed', data: { effectId: request.effectId, turn, error: cancelled, elapsedMs: context.elapsedMs() } };
        }
      }
    },
  };
};
