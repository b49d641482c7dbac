import type { ModelEvent } from '../../models/model-contract.js';
import { errorFromResponse, errorFromStreamEvent, providerError, redact } from './provider-errors.js';
import { SseParser, type SseEvent } from './sse-parser.js';

/**
 * Translates one vendor's server-sent events into `ModelEvent`s. Request-scoped: a new normalizer per call, holding
 * only that stream's buffers. It never throws for bad vendor data; it pushes an `error` event and closes.
 */
export interface StreamNormalizer {
  /** Translate one event, pushing zero or more model events to `out`. */
  accept(event: SseEvent, out: ModelEvent[]): void;
  /** The body ended: push the closing events, or an error when the stream stopped before its finish signal. */
  end(out: ModelEvent[]): void;
  /** True once `finished` or `error` was pushed; the transport then stops reading and releases the connection. */
  readonly closed: boolean;
}

/** One streaming POST: where, what, and how to read and explain the answer. */
export interface SseCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal?: AbortSignal | undefined;
  /** Abort and report `timeout` when no byte arrives for this long (headers or body). */
  idleTimeoutMs: number;
  /** The endpoint without credentials, for messages. */
  endpoint: string;
  /** Where the user sets the key, named in auth errors (`OPENAI_API_KEY`). */
  keyHint?: string | undefined;
  /** Values that must never appear in a message (the API key). */
  secrets: readonly string[];
  /** The response header carrying the vendor's request id. */
  requestIdHeader: string;
  fetch: typeof fetch;
  normalizer(context: { requestId: string | undefined }): StreamNormalizer;
}

const causeOf = (error: unknown): string => {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
};

/**
 * The port of `endpoint` when `error` is fetch refusing it outright: the Fetch standard blocks some ports (1, 6000,
 * 6665–6669, 10080, …) before connecting, so no retry can help.
 */
const refusedPort = (error: unknown, endpoint: string): string | undefined => {
  if ((error as { cause?: { message?: unknown } }).cause?.message !== 'bad port') return undefined;
  try {
    return new URL(endpoint).port || 'of this URL';
  } catch {
    return 'of this URL';
  }
};

const readErrorBody = async (response: Response): Promise<unknown> => {
  const text = (await response.text()).slice(0, 8000);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

/**
 * Iterate the events of each batch. A buffered event costs one resolved promise rather than a generator resumption,
 * which matters at tens of thousands of deltas; `return` reaches the batch generator, so its cleanup runs.
 */
const flatten = <T>(batches: AsyncGenerator<T[]>): AsyncIterableIterator<T> => {
  let buffer: T[] = [];
  let index = 0;
  const pull = async (): Promise<IteratorResult<T>> => {
    for (;;) {
      const result = await batches.next();
      if (result.done) return { value: undefined, done: true };
      if (result.value.length === 0) continue;
      buffer = result.value;
      index = 1;
      return { value: buffer[0]!, done: false };
    }
  };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () => (index < buffer.length ? Promise.resolve({ value: buffer[index++]!, done: false }) : pull()),
    return: async () => {
      buffer = [];
      await batches.return(undefined);
      return { value: undefined, done: true };
    },
  };
  return iterator;
};

/**
 * POST `call.body` as JSON and stream the answer as model events: non-2xx answers, error bodies, network failures,
 * idle timeouts and aborts all become one `error` event (never an exception). Bytes are decoded with a streaming
 * UTF-8 decoder and parsed incrementally, so chunk boundaries never matter. Ending early (the consumer stops, the
 * normalizer closes, the signal fires) aborts the request so the connection is released.
 */
export const streamSse = (call: SseCall): AsyncIterableIterator<ModelEvent> => flatten(streamBatches(call));

async function* streamBatches(call: SseCall): AsyncGenerator<ModelEvent[]> {
  if (call.signal?.aborted) {
    yield [{ type: 'error', error: providerError('cancelled', 'the model call was cancelled before it started') }];
    return;
  }
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(call.signal?.reason);
  call.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, call.idleTimeoutMs);
  timer.unref();
  let settled = false;
  const failure = (error: unknown, during: string): ModelEvent[] => {
    if (call.signal?.aborted) return [{ type: 'error', error: providerError('cancelled', 'the model call was cancelled') }];
    if (timedOut) return [{ type: 'error', error: providerError('timeout', `no data from ${call.endpoint} for ${call.idleTimeoutMs} ms ${during}`) }];
    return [{ type: 'error', error: providerError('network', redact(`the connection to ${call.endpoint} failed ${during}: ${causeOf(error)}`, call.secrets)) }];
  };
  try {
    let response: Response;
    try {
      response = await call.fetch(call.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...call.headers }, body: JSON.stringify(call.body), signal: controller.signal });
    } catch (error) {
      const port = call.signal?.aborted ? undefined : refusedPort(error, call.endpoint);
      yield port === undefined ? failure(error, 'before it answered') : [{ type: 'error', error: providerError('bad_request', redact(`fetch refuses to connect to ${call.endpoint}: port ${port} is one the Fetch standard blocks ("bad port": 1, 6000, 6665–6669, 10080 and others) — run the server on another port`, call.secrets)) }];
      return;
    }
    timer.refresh();
    const contentType = response.headers.get('content-type') ?? '';
    if (!response.ok || contentType.includes('application/json')) {
      let body: unknown;
      try {
        body = await readErrorBody(response);
      } catch (error) {
        yield failure(error, 'while reading its error');
        return;
      }
      settled = true;
      if (!response.ok) yield [{ type: 'error', error: errorFromResponse({ status: response.status, headers: response.headers, body, endpoint: call.endpoint, keyHint: call.keyHint, secrets: call.secrets }) }];
      else if (typeof body === 'object' && body !== null && 'error' in body) yield [{ type: 'error', error: errorFromStreamEvent(body, call.endpoint, call.secrets) }];
      else yield [{ type: 'error', error: providerError('bad_request', `${call.endpoint} answered with JSON instead of an event stream; does it support streaming?`) }];
      return;
    }
    // A web page where the API should be (a proxy's or a login page, a base URL missing its `/v1`): waiting and
    // retrying will not change it, so the call fails at once, naming what came back.
    if (/html|xml/i.test(contentType)) {
      settled = true;
      await response.body?.cancel().catch(() => undefined);
      yield [{ type: 'error', error: providerError('bad_request', `${call.endpoint} answered HTTP ${response.status} with ${contentType.split(';')[0]!.trim()}, not an event stream: the base URL points at a web page (a proxy, a login page, or a path missing its /v1?) — check the base URL and any proxy in between`) }];
      return;
    }
    const normalizer = call.normalizer({ requestId: response.headers.get(call.requestIdHeader) ?? undefined });
    const reader = response.body?.getReader();
    if (!reader) {
      yield [{ type: 'error', error: providerError('network', `${call.endpoint} sent no body`) }];
      return;
    }
    const decoder = new TextDecoder('utf-8');
    const parser = new SseParser();
    let out: ModelEvent[] = [];
    const feed = (events: readonly SseEvent[]) => {
      for (const event of events) {
        normalizer.accept(event, out);
        if (normalizer.closed) return;
      }
    };
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        yield failure(error, 'mid-stream');
        return;
      }
      if (chunk.done) break;
      timer.refresh();
      feed(parser.push(decoder.decode(chunk.value, { stream: true })));
      const batch = out;
      out = [];
      yield batch;
      if (normalizer.closed) return;
    }
    feed(parser.push(decoder.decode()));
    if (!normalizer.closed) feed(parser.end());
    if (!normalizer.closed) normalizer.end(out);
    settled = true;
    yield out;
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onAbort);
    if (!settled) controller.abort();
  }
}
