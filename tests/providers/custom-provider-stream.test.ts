import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryEventStore, createRein, defineTool, flattenRecords, type ModelEvent, type ModelProvider } from 'rein';
import { makeTempDir, propertyRuns } from '../support/temp-dir.js';

let workspace: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  workspace = await makeTempDir('rein-custom-stream-');
});
afterAll(() => workspace.remove());

/** A host's provider: its first reply is `events` as given (however malformed), every later one a plain answer. */
const customProvider = (events: readonly unknown[]): ModelProvider => ({
  name: 'custom',
  model: 'custom-1',
  async *stream(request) {
    if (request.turn === 1) {
      yield* events as ModelEvent[];
      return;
    }
    yield { type: 'text-delta', text: 'Done.' };
    yield { type: 'finished', stopReason: 'end_turn' };
  },
});

/** Run one session on `events` with a counting tool; model calls are not retried, so a rejected stream ends it. */
const runOn = async (events: readonly unknown[]) => {
  const ran: number[] = [];
  const mark = defineTool({ name: 'mark', description: 'Mark a number.', parameters: z.object({ n: z.number() }), execute: async ({ n }) => (ran.push(n), `marked ${n}`) });
  const store = createMemoryEventStore();
  const rein = await createRein({ store, workspace: workspace.path, provider: customProvider(events), tools: [mark], permissions: { rules: ['allow mark'] }, retry: { maxAttempts: 1 } });
  const session = await rein.startSession({ task: 'mark' });
  const result = await session.whenQuiet();
  const records = flattenRecords(await store.read(session.id));
  await rein.close();
  const errors = records.filter((record) => record.type === 'model.failed').map((record) => (record.data as { error: { code: string; message: string; retryable: boolean } }).error);
  return { ran, result, records, errors };
};

const intent = (n: number): ModelEvent => ({ type: 'tool-intent', providerCallId: `c${n}`, name: 'mark', arguments: { n } });
const delta = (index: number): ModelEvent => ({ type: 'tool-intent-delta', index, name: 'mark', argumentsDelta: '{"n":' });

describe('a custom provider\'s event stream is checked (issue 30 item 25)', () => {
  it('argument deltas of a call whose tool-intent never came are a malformed_tool_call, not silently dropped', async () => {
    const { ran, result, errors } = await runOn([{ type: 'started' }, delta(0), delta(1), intent(0), { type: 'finished', stopReason: 'tool_use' }]);
    expect(result.status).toBe('failed');
    expect(ran).toEqual([]);
    expect(errors[0]).toMatchObject({ code: 'malformed_tool_call', message: expect.stringContaining('completed 1 with a tool-intent') });
  });

  it('a tool-intent after finished never runs a tool; text after it is ignored; usage after it is taken', async () => {
    const late = await runOn([{ type: 'text-delta', text: 'All done.' }, { type: 'finished', stopReason: 'end_turn' }, intent(7)]);
    expect(late.ran).toEqual([]);
    expect(late.result.status).toBe('failed');
    expect(late.errors[0]).toMatchObject({ code: 'malformed_tool_call', message: expect.stringContaining('after its finished event') });

    const trailing = await runOn([{ type: 'text-delta', text: 'All done.' }, { type: 'finished', stopReason: 'end_turn' }, { type: 'text-delta', text: ' And more.' }, { type: 'usage', usage: { inputTokens: 11, outputTokens: 3 } }]);
    expect(trailing.result.status).toBe('completed');
    const responded = trailing.records.find((record) => record.type === 'model.responded')?.data as { text: string; usage: { inputTokens: number } };
    expect(responded.text).toBe('All done.');
    expect(responded.usage.inputTokens).toBe(11);
  });

  it('a content_filter finish is a content_filter failure, recorded and shown, not an answer', async () => {
    const { result, errors, records } = await runOn([{ type: 'text-delta', text: 'I cannot' }, { type: 'finished', stopReason: 'content_filter' }]);
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('content_filter');
    expect(errors[0]).toMatchObject({ code: 'content_filter', retryable: false });
    expect(records.some((record) => record.type === 'model.responded')).toBe(false);
  });

  it('an event of no known type, or a tool-intent without arguments, is a typed provider error', async () => {
    const unknown = await runOn([{ type: 'tool-call', name: 'mark' }, { type: 'finished', stopReason: 'tool_use' }]);
    expect(unknown.errors[0]).toMatchObject({ code: 'unknown', message: expect.stringContaining('"tool-call"') });
    const bare = await runOn([{ type: 'tool-intent', name: 'mark' }, { type: 'finished', stopReason: 'tool_use' }]);
    expect(bare.errors[0]).toMatchObject({ code: 'malformed_tool_call' });
    expect(bare.ran).toEqual([]);
  });

  it('fuzzed event sequences: only intents before the first finish run, orphan deltas and filtered replies never complete', async () => {
    const event = fc.oneof(
      fc.constant<ModelEvent>({ type: 'text-delta', text: 'x' }),
      fc.nat({ max: 3 }).map((n) => intent(n)),
      fc.nat({ max: 3 }).map((index) => delta(index)),
      fc.constant<ModelEvent>({ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }),
      fc.constantFrom<ModelEvent>({ type: 'finished', stopReason: 'end_turn' }, { type: 'finished', stopReason: 'tool_use' }, { type: 'finished', stopReason: 'content_filter' }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 8 }), async (events) => {
        const { ran, result } = await runOn(events);
        const end = events.findIndex((item) => item.type === 'finished');
        const before = end < 0 ? events : events.slice(0, end);
        const after = end < 0 ? [] : events.slice(end + 1);
        const intents = before.filter((item) => item.type === 'tool-intent').map((item) => Number((item as { arguments: Record<string, unknown> }).arguments.n));
        const orphans = new Set(before.flatMap((item) => (item.type === 'tool-intent-delta' ? [item.index] : []))).size > intents.length;
        const filtered = end >= 0 && (events[end] as { stopReason: string }).stopReason === 'content_filter';
        const lateCall = after.some((item) => item.type === 'tool-intent' || item.type === 'tool-intent-delta');
        const clean = end >= 0 && !orphans && !filtered && !lateCall;
        // Nothing runs from a stream that is rejected; a clean one runs exactly the intents before the finish.
        expect(ran.sort()).toEqual(clean ? [...intents].sort() : []);
        expect(result.status).toBe(clean ? 'completed' : 'failed');
      }),
      { numRuns: propertyRuns(15) },
    );
  });
});
