import type { ProviderErrorInfo } from '../../models/model.records.js';

/** How hard the model-call executor tries before a provider error fails the session. */
export interface RetryPolicy {
  /** Attempts per model call, the first included (default 5). */
  maxAttempts: number;
  /** The backoff before the second attempt; it doubles per attempt (default 1,000 ms). */
  baseDelayMs: number;
  /** The backoff never exceeds this, unless the server's `retry-after` asks for more (default 30,000 ms). */
  maxDelayMs: number;
  /** No retry is started when the call has already taken, or would wait past, this long (default 120,000 ms). */
  maxTotalMs: number;
}

export const defaultRetryPolicy: Readonly<RetryPolicy> = Object.freeze({ maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000, maxTotalMs: 120_000 });

/** What to do after a failed attempt. */
export type RetryDecision = { decision: 'retry'; delayMs: number } | { decision: 'compact' } | { decision: 'fail' };

/**
 * Exponential backoff with equal jitter: half of `min(maxDelay, base · 2^(attempt-1))` is fixed, the other half
 * scaled by `random()` (the runtime's randomness, injected, so tests and hosts control it).
 */
export const backoffDelay = (attempt: number, policy: RetryPolicy, random: () => number): number => {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(cap / 2 + (random() * cap) / 2);
};

/**
 * Decide after attempt `attempt` failed with `error`. `context_length` asks for one compaction (when the caller has
 * a compaction hook and has not compacted yet); non-retryable errors (auth, bad request, quota, content filter,
 * cancelled…) fail at once; retryable ones wait `retry-after` when the server sent one, otherwise the jittered
 * backoff, while attempts and the time budget last.
 */
export const decideAfterFailure = (input: { error: ProviderErrorInfo; attempt: number; elapsedMs: number; policy: RetryPolicy; random: () => number; canCompact: boolean }): RetryDecision => {
  const { error, attempt, elapsedMs, policy } = input;
  if (error.code === 'context_length') return input.canCompact ? { decision: 'compact' } : { decision: 'fail' };
  if (!error.retryable || attempt >= policy.maxAttempts) return { decision: 'fail' };
  const delayMs = error.retryAfterMs ?? backoffDelay(attempt, policy, input.random);
  if (elapsedMs + delayMs > policy.maxTotalMs) return { decision: 'fail' };
  return { decision: 'retry', delayMs };
};

/**
 * Errors that say "this provider cannot answer now" rather than "this request is wrong": after the retry budget for
 * one provider is spent on them, the call moves to the next provider of the fallback chain. Auth, bad request,
 * context length, content filter and malformed tool calls never fall back (another provider would hide the fault).
 */
export const fallbackCodes: ReadonlySet<ProviderErrorInfo['code']> = new Set(['rate_limit', 'overloaded', 'server_error', 'network', 'timeout', 'quota']);

/** Wait `ms`, or less when `signal` fires; resolves true when the full time passed. */
export const sleep = (ms: number, signal: AbortSignal): Promise<boolean> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
