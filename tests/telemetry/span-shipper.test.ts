import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readableSpanOf, resourceOf } from '../../src/telemetry/otel-bridge.js';
import { SpanShipper } from '../../src/telemetry/span-shipper.js';
import type { GenAiSpan } from '../../src/telemetry/span-types.js';
import { propertyRuns } from '../support/temp-dir.js';

const spanNumber = (index: number): GenAiSpan => ({
  traceId: '0'.repeat(31) + '1',
  spanId: index.toString(16).padStart(16, '0'),
  parentSpanId: undefined,
  name: `span ${index}`,
  kind: 'internal',
  startMs: 1_000,
  endMs: 1_001,
  attributes: {},
  events: [],
  droppedEvents: 0,
  links: [],
  status: { code: 'unset' },
});
const spans = (from: number, count: number) => Array.from({ length: count }, (_, index) => spanNumber(from + index));

type Callback = (result: { code: number; error?: Error }) => void;

/** An exporter the test drives: it records each call and answers when told to (or at once with `auto`). */
const manualExporter = (auto?: { code: number; error?: Error }) => {
  const calls: Array<{ spans: ReadableSpan[]; answer: Callback }> = [];
  let shutdowns = 0;
  const exporter: SpanExporter = {
    export: (batch, answer) => {
      calls.push({ spans: batch, answer });
      if (auto) answer(auto);
    },
    shutdown: async () => {
      shutdowns++;
    },
  };
  return { exporter, calls, shutdowns: () => shutdowns };
};

const resource = resourceOf();
const toReadable = (span: GenAiSpan) => readableSpanOf(span, resource);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the span shipper', () => {
  it('ships each span as it ends when idle, and batches what ends while an export is in flight', async () => {
    const { exporter, calls } = manualExporter();
    const shipper = new SpanShipper(exporter, toReadable);
    shipper.push(spans(0, 1));
    await tick();
    expect(calls.map((call) => call.spans.length)).toEqual([1]);
    shipper.push(spans(1, 2));
    shipper.push(spans(3, 3));
    await tick();
    expect(calls).toHaveLength(1);
    calls[0]!.answer({ code: 0 });
    expect(calls.map((call) => call.spans.length)).toEqual([1, 5]);
    calls[1]!.answer({ code: 0 });
    expect(shipper.stats()).toMatchObject({ ended: 6, exported: 6, dropped: 0, queued: 0, inFlight: 0 });
  });

  it('drops and counts what overflows the queue, and what a failing or throwing exporter loses', async () => {
    const { exporter, calls } = manualExporter();
    const shipper = new SpanShipper(exporter, toReadable, { maxQueueSize: 4 });
    shipper.push(spans(0, 6));
    expect(shipper.stats()).toMatchObject({ ended: 6, queued: 0, inFlight: 4, dropped: 2, lastError: 'the export queue was full (4 spans)' });
    calls[0]!.answer({ code: 1, error: new Error('HTTP 500') });
    expect(shipper.stats()).toMatchObject({ exported: 0, dropped: 6, failedExports: 1, lastError: 'HTTP 500' });
    const throwing = new SpanShipper({ export: () => { throw new Error('boom'); }, shutdown: async () => {} }, toReadable);
    throwing.push(spans(0, 3));
    await tick();
    expect(throwing.stats()).toMatchObject({ dropped: 3, failedExports: 1, lastError: 'boom' });
  });

  it('counts an export that never reports back as failed after its timeout', async () => {
    const { exporter, calls } = manualExporter();
    const shipper = new SpanShipper(exporter, toReadable, { exportTimeoutMs: 20 });
    shipper.push(spans(0, 2));
    await tick();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(shipper.stats()).toMatchObject({ dropped: 2, inFlight: 0, failedExports: 1 });
    calls[0]!.answer({ code: 0 });
    expect(shipper.stats()).toMatchObject({ exported: 0, dropped: 2 });
  });

  it('flushes within its bound: what was sent and not answered by then is unconfirmed, not dropped, and a late answer settles it (trial 6 F18)', async () => {
    const { exporter, calls, shutdowns } = manualExporter();
    const shipper = new SpanShipper(exporter, toReadable, { maxBatchSize: 2 });
    shipper.push(spans(0, 5));
    const stats = await shipper.shutdown(50);
    expect(calls.map((call) => call.spans.length)).toEqual([2, 2, 1]);
    expect(stats).toMatchObject({ ended: 5, exported: 0, dropped: 0, unconfirmed: 5, queued: 0, inFlight: 0 });
    expect(stats.unconfirmedReason).toContain('within 50 ms');
    expect(shutdowns()).toBe(1);
    calls[0]!.answer({ code: 0 });
    calls[1]!.answer({ code: 1, error: new Error('HTTP 500') });
    shipper.push(spans(5, 1));
    expect(shipper.stats()).toMatchObject({ exported: 2, dropped: 3, unconfirmed: 1 });
  });

  it('an export the exporter reports as timed out is unconfirmed (sent, no answer), one refused is dropped (trial 6 F18)', async () => {
    const { exporter, calls } = manualExporter();
    const shipper = new SpanShipper(exporter, toReadable, { maxBatchSize: 2 });
    shipper.push(spans(0, 2));
    await tick();
    calls[0]!.answer({ code: 1, error: new Error('Request timed out') });
    shipper.push(spans(2, 2));
    await tick();
    calls[1]!.answer({ code: 1, error: new Error('connect ECONNREFUSED 127.0.0.1:4318') });
    expect(shipper.stats()).toMatchObject({ exported: 0, unconfirmed: 2, dropped: 2, failedExports: 2, unconfirmedReason: expect.stringContaining('Request timed out'), lastError: expect.stringContaining('ECONNREFUSED') });
  });

  it('accounts for every span, whatever the exporter does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.constantFrom('ok', 'fail', 'throw', 'late')), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 30 }), async (steps, maxQueueSize) => {
        let step = 0;
        const pending: Callback[] = [];
        const exporter: SpanExporter = {
          export: (_batch, answer) => {
            const mode = steps[step++ % steps.length]![1];
            if (mode === 'throw') throw new Error('thrown');
            if (mode === 'late') pending.push(answer);
            else answer({ code: mode === 'ok' ? 0 : 1 });
          },
          shutdown: async () => {},
        };
        const shipper = new SpanShipper(exporter, toReadable, { maxQueueSize, maxBatchSize: 4 });
        let next = 0;
        for (const [count] of steps) {
          shipper.push(spans(next, count));
          next += count;
          if (pending.length > 0 && count % 2 === 0) pending.shift()!({ code: 0 });
          await tick();
        }
        const stats = await shipper.flush(20);
        expect(stats.ended).toBe(next);
        expect(stats.exported + stats.dropped + stats.unconfirmed + stats.queued + stats.inFlight).toBe(next);
        expect(stats.queued + stats.inFlight).toBe(0);
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});
