import * as z from 'zod';

import { CallSpec } from './call-spec.js';
import { StopReason } from './stop-reason.js';
import { lazySchema } from './lazy-schema.js';

export { StopReason } from './stop-reason.js';

/**
 * The provider error taxonomy; `retryable` says whether another attempt may succeed. `context_length` is not
 * retryable as is, but the model-call executor may compact the context once and try again. `script_exhausted` also
 * covers a recorded provider with no output for the requested actor and turn.
 */
export const ProviderErrorCode = lazySchema(() => z.enum([
  'rate_limit',
  'overloaded',
  'server_error',
  'network',
  'timeout',
  'auth',
  'bad_request',
  'context_length',
  'malformed_tool_call',
  'content_filter',
  'quota',
  'script_exhausted',
  'cancelled',
  'unknown',
]));
export type ProviderErrorCode = z.infer<typeof ProviderErrorCode>;

export const ProviderErrorInfo = lazySchema(() => z.object({
  code: ProviderErrorCode,
  message: z.string(),
  retryable: z.boolean(),
  retryAfterMs: z.number().nonnegative().optional(),
}));
export type ProviderErrorInfo = z.infer<typeof ProviderErrorInfo>;

/**
 * A value in the model's tool arguments that no log can hold faithfully: a number that is not finite (`1e309`), a
 * lone UTF-16 surrogate, nesting deeper than the limit, a value that is not JSON (a custom provider's `Map` or
 * `BigInt`), a `__proto__` key. The recorded arguments carry `null` / U+FFFD in its place (a `__proto__` key is left
 * out) and the call is refused as `InvalidInput` naming `path` — so the log replays exactly what ran.
 */
export const ArgumentProblem = lazySchema(() => z.object({
  path: z.string(),
  problem: z.enum(['non_finite_number', 'lone_surrogate', 'too_deep', 'not_json', 'reserved_key']),
}));
export type ArgumentProblem = z.infer<typeof ArgumentProblem>;

/**
 * A complete tool call proposed by the model. `callId` is the core's id; the vendor's id is provenance only;
 * `invalid` lists the values the runtime had to replace before recording the call (it is then refused).
 */
export const ToolCall = lazySchema(() => z.object({
  callId: z.string().min(1),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  providerCallId: z.string().optional(),
  invalid: z.array(ArgumentProblem).optional(),
}));
export type ToolCall = z.infer<typeof ToolCall>;

export const TokenUsage = lazySchema(() => z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  /** The endpoint reported no usage: these are rein's own count (request and reply characters / 4). */
  estimated: z.literal(true).optional(),
  /** Of `inputTokens`, those read from the provider's prompt cache (Anthropic `cache_read_input_tokens`, OpenAI `cached_tokens`). */
  cacheReadTokens: z.number().int().nonnegative().optional(),
  /** Of `inputTokens`, those written to the provider's prompt cache (Anthropic `cache_creation_input_tokens`). */
  cacheWriteTokens: z.number().int().nonnegative().optional(),
}));
export type TokenUsage = z.infer<typeof TokenUsage>;

/**
 * input · the settled outcome of one `callModel` effect: the assembled reply and its tool calls. v2: the CallSpec is
 * stored whole once per stream for each set of members (`callSpecBase` names them) and as `callSpecRef` after that —
 * the spec every turn of an agent and every child of a delegation repeats; readers get it whole (`upcastRecords`).
 */
export const ModelResponded = lazySchema(() => z.object({
  effectId: z.string().min(1),
  turn: z.number().int().positive(),
  text: z.string(),
  reasoning: z.string().optional(),
  toolCalls: z.array(ToolCall),
  stopReason: StopReason,
  /** The vendor's own stop reason when `stopReason` is `unknown` (one no adapter maps), as it came. */
  rawStopReason: z.string().optional(),
  usage: TokenUsage,
  elapsedMs: z.number().nonnegative(),
  /**
   * The typed contract the call ran under (harness-typestate §4.1); the session hands it to the turn it spawns. Stored
   * whole the first time the stream holds a spec with its members (all but `callId`); after that, a spec with the same
   * members is stored as `callSpecRef` instead (v2). Readers get it whole: `upcastRecords` puts it back.
   */
  callSpec: CallSpec.optional(),
  /**
   * With a whole `callSpec` (v2): the digest of its members without `callId` (`digestOf`, `b3:`), the name later
   * records of the stream use for them in `callSpecRef`.
   */
  callSpecBase: z.string().optional(),
  /**
   * In place of `callSpec` (v2): the spec is `{ callId, ...members }`, its members those of the earlier whole
   * `callSpec` of this stream whose `callSpecBase` is `base` (the spec every child of a delegation repeats, stored
   * once). `upcastRecords` resolves it in log order; a read of part of a log that starts after the whole spec leaves it
   * as it is.
   */
  callSpecRef: z.object({ callId: z.string().min(1), base: z.string().min(1) }).optional(),
  /**
   * A final reply that a `stop` hook answered with "continue" (docs/capabilities.md: *Hooks*): the session takes another turn instead
   * of ending, at most `maxStopContinuations` times. The hook's reason is what the model reads. Past that bound the
   * hook is still asked; its "continue" ends the session with a `stop_hook_objected` caveat instead.
   */
  continuation: z.object({ reason: z.string(), by: z.string().optional() }).optional(),
  /** The turn's `pre_flight` guardrail verdict, decided before any of its calls runs (a block refuses them all). */
  preFlight: z.object({ verdict: z.enum(['pass', 'block']), by: z.string().optional(), reason: z.string().optional() }).optional(),
  /**
   * A final answer checked against the session's output schema (docs/model-input.md: *Typed final answers*): its parsed value, or
   * the validation errors the model is shown (at most `maxOutputCorrections` times, then the session fails).
   */
  output: z.union([z.object({ ok: z.literal(true), value: z.unknown() }), z.object({ ok: z.literal(false), errors: z.array(z.string()).min(1) })]).optional(),
}));
export type ModelResponded = z.infer<typeof ModelResponded>;

/** input · a `callModel` effect failed after its retry budget; the session fails (never a tool error). */
export const ModelFailed = lazySchema(() => z.object({
  effectId: z.string().min(1),
  turn: z.number().int().positive(),
  error: ProviderErrorInfo,
  elapsedMs: z.number().nonnegative(),
}));
export type ModelFailed = z.infer<typeof ModelFailed>;

/** What the model-call executor decided after one attempt. */
export const AttemptDecision = lazySchema(() => z.enum(['done', 'retry', 'compact', 'fallback', 'fail']));
export type AttemptDecision = z.infer<typeof AttemptDecision>;

/**
 * effect (fact) · one attempt of a `callModel` effect: which provider and model answered, how it ended, and what
 * the executor did next (`retry` after `delayMs`, `compact` the context then retry, `fail`, or `done`). Replay skips
 * it; only the final `model.responded` / `model.failed` is an input.
 */
export const ModelAttempted = lazySchema(() => z.object({
  effectId: z.string().min(1),
  attempt: z.number().int().positive(),
  provider: z.string().min(1),
  model: z.string().optional(),
  requestId: z.string().optional(),
  outcome: z.enum(['ok', 'error']),
  errorCode: ProviderErrorCode.optional(),
  message: z.string().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
  decision: AttemptDecision,
  delayMs: z.number().nonnegative().optional(),
  /** With decision `fallback`: the provider (and model) the next attempt goes to. */
  fallbackTo: z.object({ provider: z.string().min(1), model: z.string().optional() }).optional(),
  durationMs: z.number().nonnegative(),
}));
export type ModelAttempted = z.infer<typeof ModelAttempted>;
