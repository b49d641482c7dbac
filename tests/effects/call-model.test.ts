import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelMessage, ModelRequest } from '../../models/model-contract.js';
import type { ProviderErrorInfo } from '../../models/model.records.js';
import { createCallModelExecutor, fallbackStickyMs, type ModelCallSource } from '../../src/effects/call-model.js';
import type { EffectContext, FactDraft } from '../../src/effects/effect.js';
import { backoffDelay, decideAfterFailure, defaultRetryPolicy } from '../../src/effects/model-retry.js';
import type { LiveEvent } from '../../models/live-events.js';
import type { ModelProvider } from '../../src/providers/provider.js';

const reply: ModelEvent[] = [
  { type: 'started', model: 'm-1' },
  { type: 'text-delta', text: 'ok' },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 1 } },
  { type: 'finished', stopReason: 'end_turn' },
];
const failure = (code: ProviderErrorInfo['code'], retryable: boolean, retryAfterMs?: number): ModelEvent[] => [{ type: 'error', error: { code, message: code, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) } }];

/** A provider that plays one scripted attempt per call and remembers each request. */
const providerOf = (attempts: ModelEvent[][]): ModelProvider & { requests: ModelRequest[] } => {
  const requests: ModelRequest[] = [];
  return {
    name: 'fake',
    model: 'm',
    requests,
    async *stream(request) {
      requests.push(request);
      yield* attempts[requests.length - 1] ?? reply;
    },
  };
};

const harness = (controller = new AbortController()) => {
  let now = 1_000;
  const facts: FactDraft[] = [];
  const live: LiveEvent[] = [];
  const sleeps: number[] = [];
  const context: EffectContext = {
    sessionId: 's',
    signal: controller.signal,
    recordFacts: async (drafts) => void facts.push(...drafts),
    live: (event) => void live.push(event),
    now: () => now,
    elapsedMs: () => now - 1_000,
  };
  const sleep = async (ms: number, signal: AbortSignal) => {
    sleeps.push(ms);
    now += ms;
    return !signal.aborted;
  };
  return { context, facts, live, sleeps, sleep, controller };
};

const messages: ModelMessage[] = [{ role: 'user', content: 'hi' }];
const source = (extra: Partial<ModelCallSource> = {}): ModelCallSource => ({ messages: () => messages, tools: () => [], role: () => undefined, ...extra });
const request = { effectId: 'root:e1', kind: 'callModel' as const, actor: 'root', args: { turn: 1 }, recordId: 'r1' };

describe('the callModel executor', () => {
  it('retries retryable errors with jittered backoff from the injected randomness, recording every attempt', async () => {
    const { context, facts, live, sleeps, sleep } = harness();
    const provider = providerOf([failure('overloaded', true), failure('server_error', true)]);
    const executor = createCallModelExecutor({ provider, source: source(), retry: { baseDelayMs: 100 }, random: () => 0.5, sleep });
    const settlement = await executor.execute(request, context);
    expect(settlement.type).toBe('model.responded');
    expect(sleeps).toEqual([75, 150]);
    expect(provider.requests.map((sent) => sent.attempt)).toEqual([1, 2, 3]);
    expect(facts.map((fact) => fact.data)).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'error', errorCode: 'overloaded', decision: 'retry', delayMs: 75 }),
      expect.objectContaining({ attempt: 2, outcome: 'error', errorCode: 'server_error', decision: 'retry', delayMs: 150 }),
    ]);
    expect(settlement.facts?.map((fact) => fact.data)).toEqual([expect.objectContaining({ attempt: 3, outcome: 'ok', decision: 'done', provider: 'fake', model: 'm-1' })]);
    expect(live.filter((event) => event.type === 'model.retrying').map((event) => event.type === 'model.retrying' && event.code)).toEqual(['overloaded', 'server_error']);
  });

  it('fails fast on auth and bad requests', async () => {
    for (const code of ['auth', 'bad_request', 'quota', 'content_filter'] as const) {
      const { context, sleeps, sleep } = harness();
      const provider = providerOf([failure(code, false)]);
      const settlement = await createCallModelExecutor({ provider, source: source(), sleep }).execute(request, context);
      expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code } } });
      expect(provider.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
    }
  });

  it('honours retry-after, and gives up when the wait would pass the time budget', async () => {
    const { context, sleeps, sleep } = harness();
    const settlement = await createCallModelExecutor({ provider: providerOf([failure('rate_limit', true, 2_500)]), source: source(), sleep }).execute(request, context);
    expect(settlement.type).toBe('model.responded');
    expect(sleeps).toEqual([2_500]);

    const tight = harness();
    const provider = providerOf([failure('rate_limit', true, 60_000)]);
    const failed = await createCallModelExecutor({ provider, source: source(), retry: { maxTotalMs: 10_000 }, sleep: tight.sleep }).execute(request, tight.context);
    expect(failed).toMatchObject({ type: 'model.failed', data: { error: { code: 'rate_limit', retryAfterMs: 60_000 } } });
    expect(tight.sleeps).toEqual([]);
  });

  it('stops after maxAttempts and says so', async () => {
    const { context, sleep } = harness();
    const provider = providerOf([failure('network', true), failure('network', true), failure('network', true)]);
    const settlement = await createCallModelExecutor({ provider, source: source(), retry: { maxAttempts: 2 }, sleep }).execute(request, context);
    expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code: 'network', message: expect.stringContaining('2 attempts') } } });
    expect(settlement.facts?.[0]?.data).toMatchObject({ attempt: 2, decision: 'fail' });
  });

  it('context_length asks the compaction hook once, then retries with the compacted messages', async () => {
    const { context, facts, sleep } = harness();
    let current: ModelMessage[] = [{ role: 'user', content: 'very long' }];
    const compactions: string[] = [];
    const provider = providerOf([failure('context_length', false), failure('context_length', false)]);
    const executor = createCallModelExecutor({
      provider,
      source: source({
        messages: () => current,
        compact: async (actor) => {
          compactions.push(actor);
          current = [{ role: 'user', content: 'short' }];
          return true;
        },
      }),
      sleep,
    });
    const settlement = await executor.execute(request, context);
    expect(compactions).toEqual(['root']);
    expect(provider.requests.map((sent) => sent.messages[0]?.content)).toEqual(['very long', 'short']);
    expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code: 'context_length' } } });
    expect(facts.map((fact) => (fact.data as { decision: string }).decision)).toEqual(['compact']);
  });

  it('context_length succeeds after a compaction; a hook that compacts nothing fails the call', async () => {
    const compacting = harness();
    const ok = await createCallModelExecutor({ provider: providerOf([failure('context_length', false)]), source: source({ compact: async () => true }), sleep: compacting.sleep }).execute(request, compacting.context);
    expect(ok.type).toBe('model.responded');

    const refusing = harness();
    const provider = providerOf([failure('context_length', false)]);
    const failed = await createCallModelExecutor({ provider, source: source({ compact: async () => false }), sleep: refusing.sleep }).execute(request, refusing.context);
    expect(failed).toMatchObject({ type: 'model.failed', data: { error: { code: 'context_length' } } });
    expect(provider.requests).toHaveLength(1);
  });

  it('a cancel during the backoff ends the call as cancelled without another attempt', async () => {
    const controller = new AbortController();
    const { context } = harness(controller);
    const provider = providerOf([failure('overloaded', true)]);
    const sleep = async () => {
      controller.abort();
      return false;
    };
    const settlement = await createCallModelExecutor({ provider, source: source(), sleep }).execute(request, context);
    expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code: 'cancelled' } } });
    expect(provider.requests).toHaveLength(1);
  });

  it('a provider that throws is an unknown provider error, never a tool error', async () => {
    const { context } = harness();
    const provider: ModelProvider = {
      name: 'broken',
      async *stream() {
        throw new Error('boom');
      },
    };
    const settlement = await createCallModelExecutor({ provider, source: source() }).execute(request, context);
    expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code: 'unknown', retryable: false } } });
  });

  it('assigns core call ids and keeps the vendor id as provenance', async () => {
    const { context } = harness();
    const provider = providerOf([
      [
        { type: 'started' },
        { type: 'tool-intent', providerCallId: 'call_a', name: 'read', arguments: { path: 'a' } },
        { type: 'tool-intent', name: 'read', arguments: { path: 'b' } },
        { type: 'finished', stopReason: 'tool_use' },
      ],
    ]);
    const settlement = await createCallModelExecutor({ provider, source: source() }).execute(request, context);
    expect(settlement.data.toolCalls).toEqual([
      { callId: 'root:e1.0', name: 'read', arguments: { path: 'a' }, providerCallId: 'call_a' },
      { callId: 'root:e1.1', name: 'read', arguments: { path: 'b' } },
    ]);
  });
});

describe('the retry decision', () => {
  it('backs off exponentially within [cap/2, cap], capped by maxDelayMs', () => {
    const policy = { ...defaultRetryPolicy, baseDelayMs: 1_000, maxDelayMs: 5_000 };
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, policy, () => 0))).toEqual([500, 1_000, 2_000, 2_500, 2_500]);
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, policy, () => 1))).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
  });

  it('never retries non-retryable errors and compacts only when it can', () => {
    const base = { attempt: 1, elapsedMs: 0, policy: defaultRetryPolicy, random: () => 0.5 };
    expect(decideAfterFailure({ ...base, error: { code: 'auth', message: '', retryable: false }, canCompact: true })).toEqual({ decision: 'fail' });
    expect(decideAfterFailure({ ...base, error: { code: 'context_length', message: '', retryable: false }, canCompact: true })).toEqual({ decision: 'compact' });
    expect(decideAfterFailure({ ...base, error: { code: 'context_length', message: '', retryable: false }, canCompact: false })).toEqual({ decision: 'fail' });
    expect(decideAfterFailure({ ...base, error: { code: 'malformed_tool_call', message: '', retryable: true }, canCompact: false })).toEqual({ decision: 'retry', delayMs: 750 });
  });

  describe('with a fallback chain', () => {
    const named = (name: string, model: string, attempts: ModelEvent[][]) => Object.assign(providerOf(attempts), { name, model });

    it('moves to the next provider once the first spent its retry budget on availability errors, recording each attempt\'s provider', async () => {
      const { context, facts, live, sleep } = harness();
      const primary = named('anthropic', 'big', [failure('overloaded', true), failure('overloaded', true)]);
      const secondary = named('openai', 'small', [failure('rate_limit', true, 10), reply]);
      const executor = createCallModelExecutor({ provider: primary, fallbacks: [secondary], source: source(), retry: { maxAttempts: 2, baseDelayMs: 100 }, random: () => 0.5, sleep });
      const settlement = await executor.execute(request, context);
      expect(settlement.type).toBe('model.responded');
      expect(primary.requests.map((sent) => [sent.attempt, sent.model])).toEqual([[1, 'big'], [2, 'big']]);
      // The fallback gets a retry budget of its own (its first failure is retried, honouring retry-after).
      expect(secondary.requests.map((sent) => [sent.attempt, sent.model])).toEqual([[3, 'small'], [4, 'small']]);
      expect(facts.map((fact) => fact.data)).toEqual([
        expect.objectContaining({ attempt: 1, provider: 'anthropic', errorCode: 'overloaded', decision: 'retry' }),
        expect.objectContaining({ attempt: 2, provider: 'anthropic', errorCode: 'overloaded', decision: 'fallback', fallbackTo: { provider: 'openai', model: 'small' } }),
        expect.objectContaining({ attempt: 3, provider: 'openai', errorCode: 'rate_limit', decision: 'retry', delayMs: 10 }),
      ]);
      expect(settlement.facts?.map((fact) => fact.data)).toEqual([expect.objectContaining({ attempt: 4, provider: 'openai', outcome: 'ok', decision: 'done' })]);
      expect(live.filter((event) => event.type === 'model.fallback')).toEqual([expect.objectContaining({ from: 'anthropic/big', to: 'openai/small', code: 'overloaded', attempt: 2 })]);
    });

    it('starts later calls at the fallback that answered for a minute — a call that merely starts there does not renew it — then tries the first provider again', async () => {
      const { context, sleep } = harness();
      const primary = named('anthropic', 'big', [failure('overloaded', false), reply]);
      const secondary = named('openai', 'small', [reply, reply, reply]);
      const executor = createCallModelExecutor({ provider: primary, fallbacks: [secondary], source: source(), sleep });
      await executor.execute(request, context);
      expect([primary.requests.length, secondary.requests.length]).toEqual([1, 1]);
      await sleep(fallbackStickyMs / 2, context.signal);
      await executor.execute({ ...request, effectId: 'root:e3' }, context);
      expect([primary.requests.length, secondary.requests.length]).toEqual([1, 2]);
      await sleep(fallbackStickyMs / 2 + 1, context.signal);
      await executor.execute({ ...request, effectId: 'root:e5' }, context);
      expect([primary.requests.length, secondary.requests.length]).toEqual([2, 2]);
    });

    it('a call that starts at the held fallback still reaches the first provider when the fallback fails, and that ends the hold', async () => {
      const { context, facts, sleep } = harness();
      const primary = named('anthropic', 'big', [failure('overloaded', false), reply, reply]);
      const secondary = named('openai', 'small', [reply, failure('server_error', false)]);
      const executor = createCallModelExecutor({ provider: primary, fallbacks: [secondary], source: source(), sleep });
      await executor.execute(request, context);
      const second = await executor.execute({ ...request, effectId: 'root:e3' }, context);
      expect(second.type).toBe('model.responded');
      expect(facts.map((fact) => fact.data).slice(-1)).toEqual([expect.objectContaining({ effectId: 'root:e3', provider: 'openai', decision: 'fallback', fallbackTo: { provider: 'anthropic', model: 'big' } })]);
      await executor.execute({ ...request, effectId: 'root:e5' }, context);
      expect([primary.requests.length, secondary.requests.length]).toEqual([3, 2]);
    });

    it('stops at once when the call is cancelled while it hands over', async () => {
      const { context, sleep, controller } = harness();
      const primary = named('anthropic', 'big', [failure('overloaded', false)]);
      const secondary = named('openai', 'small', [reply]);
      const recordFacts = context.recordFacts;
      context.recordFacts = async (drafts, options) => {
        await recordFacts(drafts, options);
        controller.abort();
      };
      const settlement = await createCallModelExecutor({ provider: primary, fallbacks: [secondary], source: source(), sleep }).execute(request, context);
      expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code: 'cancelled' } } });
      expect(secondary.requests).toHaveLength(0);
    });

    it('falls back on quota at once, but never on errors another provider would only hide', async () => {
      const { context, facts, sleep } = harness();
      const primary = named('openai', 'a', [failure('quota', false)]);
      const secondary = named('anthropic', 'b', [reply]);
      const settlement = await createCallModelExecutor({ provider: primary, fallbacks: [secondary], source: source(), sleep }).execute(request, context);
      expect(settlement.type).toBe('model.responded');
      expect(facts.map((fact) => fact.data)).toEqual([expect.objectContaining({ attempt: 1, errorCode: 'quota', decision: 'fallback' })]);
      for (const code of ['auth', 'bad_request', 'content_filter', 'malformed_tool_call'] as const) {
        const run = harness();
        const first = named('openai', 'a', [failure(code, false)]);
        const second = named('anthropic', 'b', [reply]);
        const failed = await createCallModelExecutor({ provider: first, fallbacks: [second], source: source(), sleep: run.sleep }).execute(request, run.context);
        expect(failed).toMatchObject({ type: 'model.failed', data: { error: { code } } });
        expect(second.requests).toHaveLength(0);
      }
    });

    it('fails with the last error once every link is spent, and never falls back after a cancel', async () => {
      const { context, sleep } = harness();
      const chain = [named('openai', 'a', [failure('server_error', true)]), named('anthropic', 'b', [failure('network', true)]), named('openai', 'c', [failure('timeout', true)])];
      const settlement = await createCallModelExecutor({ provider: chain[0]!, fallbacks: chain.slice(1), source: source(), retry: { maxAttempts: 1 }, sleep }).execute(request, context);
      expect(settlement).toMatchObject({ type: 'model.failed', data: { error: { code: 'timeout', message: expect.stringContaining('gave up after 3 attempts') } } });
      expect(chain.map((provider) => provider.requests.length)).toEqual([1, 1, 1]);

      const cancelledRun = harness();
      const slow = named('openai', 'a', []);
      slow.stream = async function* () {
        cancelledRun.controller.abort();
        yield* failure('network', true);
      };
      const spare = named('anthropic', 'b', [reply]);
      const stopped = await createCallModelExecutor({ provider: slow, fallbacks: [spare], source: source(), sleep: cancelledRun.sleep }).execute(request, cancelledRun.context);
      expect(stopped).toMatchObject({ type: 'model.failed', data: { error: { code: 'cancelled' } } });
      expect(spare.requests).toHaveLength(0);
    });
  });
});
