import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { GenAiSpan } from './span-types.js';

/** What happened to the spans telemetry was given, so far. */
export interface TelemetryStats {
  /** Spans that ended and were handed to the exporter's queue. */
  ended: number;
  /** Spans the exporter reported as delivered. */
  exported: number;
  /** Spans lost: the queue was full, an export failed or timed out, or a flush gave up on them before sending them. */
  dropped: number;
  /**
   * Spans sent (their export call started) that a flush stopped waiting for before the collector answered: the
   * collector may well have them (a slow one acknowledges late). A late answer still moves them to `exported` or
   * `dropped`.
   */
  unconfirmed: number;
  /** Spans waiting for the exporter. */
  queued: number;
  /** Spans inside an export call that has not reported back. */
  inFlight: number;
  /** Export calls that failed (each drops its batch). */
  failedExports: number;
  /** Why the last export failed or the last span was dropped. */
  lastError?: string;
  /** Why spans are unconfirmed (how long the flush waited). */
  unconfirmedReason?: string;
}

export interface ShipperOptions {
  /** Spans the queue holds before new ones are dropped (default 2,048). */
  maxQueueSize?: number;
  /** Spans per export call (default 512). */
  maxBatchSize?: number;
  /** An export call that has not reported back after this long counts as failed (default 30 s). */
  exportTimeoutMs?: number;
}

/** An exporter's failure that says the request was sent and not answered in time (the OTLP exporters' `Request timed out`). */
const timedOut = /\btimed? ?out\b|\btimeout\b/i;

interface Batch {
  spans: number;
  abandoned: boolean;
}

/**
 * Hands finished spans to a `SpanExporter` without ever making the caller wait: `push` queues them (bounded; the
 * overflow is dropped and counted) and starts an export call when none is in flight (`export` must not block: the
 * OTLP exporters only start a request). One export call runs at a time while sessions run, so
 * spans that end while a slow collector answers go out together in the next call; `flush` sends everything at once
 * and waits at most its timeout, counting what did not make it. An exporter that throws, fails or never calls back
 * costs its batch, never the session.
 */
export class SpanShipper {
  private readonly queue: GenAiSpan[] = [];
  private readonly batches = new Set<Batch>();
  private readonly counts = { ended: 0, exported: 0, dropped: 0, unconfirmed: 0, inFlight: 0, failedExports: 0 };
  private lastError: string | undefined;
  private unconfirmedReason: string | undefined;
  private flushing = 0;
  private closed = false;
  private waiters: Array<() => void> = [];
  private readonly maxQueueSize: number;
  private readonly maxBatchSize: number;
  private readonly exportTimeoutMs: number;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly toReadable: (span: GenAiSpan) => ReadableSpan,
    options: ShipperOptions = {},
  ) {
    this.maxQueueSize = options.maxQueueSize ?? 2_048;
    this.maxBatchSize = options.maxBatchSize ?? 512;
    this.exportTimeoutMs = options.exportTimeoutMs ?? 30_000;
  }

  /** Queue ended spans for export; returns at once and never throws. */
  push(spans: readonly GenAiSpan[]): void {
    if (spans.length === 0) return;
    this.counts.ended += spans.length;
    const room = this.closed ? 0 : Math.max(0, this.maxQueueSize - this.queue.length);
    for (const span of room >= spans.length ? spans : spans.slice(0, room)) this.queue.push(span);
    if (room < spans.length) this.drop(spans.length - room, this.closed ? 'telemetry was shut down' : `the export queue was full (${this.maxQueueSize} spans)`);
    // Hand them over now when no export is in flight: a session on a fast store may not yield to the event loop
    // for thousands of steps, so waiting for a later tick would only fill the queue.
    this.pump();
  }

  stats(): TelemetryStats {
    return { ...this.counts, queued: this.queue.length, ...(this.lastError ? { lastError: this.lastError } : {}), ...(this.unconfirmedReason && this.counts.unconfirmed > 0 ? { unconfirmedReason: this.unconfirmedReason } : {}) };
  }

  /**
   * Send every queued span now and wait until the exporter has reported on all of them, or `timeoutMs` passed:
   * whatever is still queued then is counted as dropped, and what is in flight (sent, not answered) as unconfirmed.
   */
  async flush(timeoutMs = 2_000): Promise<TelemetryStats> {
    this.flushing++;
    try {
      this.pump();
      if (this.queue.length > 0 || this.batches.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          new Promise<boolean>((resolve) => this.waiters.push(() => resolve(true))),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
        ]);
        clearTimeout(timer);
        if (!settled) this.abandon(timeoutMs);
      }
    } finally {
      this.flushing--;
    }
    return this.stats();
  }

  /** Flush (waiting at most `timeoutMs` in all), then shut the exporter down; spans pushed later are dropped. */
  async shutdown(timeoutMs = 2_000): Promise<TelemetryStats> {
    const started = Date.now();
    const stats = await this.flush(timeoutMs);
    this.closed = true;
    const remaining = Math.max(0, timeoutMs - (Date.now() - started));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.resolve().then(() => this.exporter.shutdown()).catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, remaining)))]);
    clearTimeout(timer);
    return { ...stats, ...this.stats() };
  }

  private pump(): void {
    while (this.queue.length > 0 && (this.flushing > 0 || this.batches.size === 0)) this.send(this.queue.splice(0, this.maxBatchSize));
    this.wake();
  }

  private send(spans: GenAiSpan[]): void {
    const batch: Batch = { spans: spans.length, abandoned: false };
    this.batches.add(batch);
    this.counts.inFlight += batch.spans;
    let done = false;
    const finish = (ok: boolean, error?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.batches.delete(batch);
      // A batch a flush stopped waiting for was counted unconfirmed: its late answer says what became of it.
      if (batch.abandoned) this.counts.unconfirmed -= batch.spans;
      else this.counts.inFlight -= batch.spans;
      if (ok) this.counts.exported += batch.spans;
      else if (error !== undefined && timedOut.test(error)) {
        // The request went out and its answer did not come back in time: the collector may have the spans.
        this.counts.failedExports++;
        this.counts.unconfirmed += batch.spans;
        this.unconfirmedReason = `the collector did not answer in time (${error})`;
      } else {
        this.counts.failedExports++;
        this.drop(batch.spans, error ?? 'the exporter reported a failure');
      }
      this.pump();
    };
    const timer = setTimeout(() => finish(false, `the export did not report back within ${this.exportTimeoutMs} ms`), this.exportTimeoutMs);
    timer.unref();
    try {
      this.exporter.export(
        spans.map((span) => this.toReadable(span)),
        (result) => finish(result.code === 0, result.error?.message),
      );
    } catch (error) {
      finish(false, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * A flush gave up after `timeoutMs`: what is still queued was never sent (dropped); what is in flight was sent and
   * not answered (unconfirmed — a late answer still settles it).
   */
  private abandon(timeoutMs: number): void {
    const queued = this.queue.splice(0).length;
    let inFlight = 0;
    for (const batch of this.batches) {
      if (batch.abandoned) continue;
      batch.abandoned = true;
      inFlight += batch.spans;
    }
    this.counts.inFlight -= inFlight;
    this.counts.unconfirmed += inFlight;
    if (inFlight > 0) this.unconfirmedReason = `the collector did not answer within ${timeoutMs} ms`;
    if (queued > 0) this.drop(queued, `they were still queued when the flush gave up after ${timeoutMs} ms`);
  }

  private drop(count: number, reason: string): void {
    this.counts.dropped += count;
    this.lastError = reason;
  }

  private wake(): void {
    if (this.queue.length > 0 || [...this.batches].some((batch) => !batch.abandoned)) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
