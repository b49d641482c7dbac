import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Subscription } from 'rxjs';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { EventStore } from '../../stores/event-store.js';
import { ReinError } from '../host/host-errors.js';
import { errorAnswer } from './serve-errors.js';

const HISTORY_PAGE = 500;
const KEEP_ALIVE_MS = 15_000;

/** Resolves when the socket drained (or closed); both listeners are removed then. */
const drained = (response: ServerResponse): Promise<void> =>
  new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });

const eventOf = (record: RecordEnvelope): string => `id: ${record.seq}\nevent: record\ndata: ${JSON.stringify(record)}\n\n`;

/** The seq to start at: after `Last-Event-ID` when the client sends one (an EventSource reconnecting), else `from`. */
export const resumeSeq = (request: IncomingMessage, from: number): number => {
  const header = request.headers['last-event-id'];
  const last = Number(Array.isArray(header) ? header[0] : header);
  return header !== undefined && Number.isSafeInteger(last) && last >= 0 ? last + 1 : from;
};

/**
 * Stream a session's records as server-sent events from `from` (inclusive), or from the seq after `Last-Event-ID`:
 * the history page by page (waiting for the socket to drain, so a long history never piles up in memory), then the
 * store's tail from the next seq — live appends, those of other processes included. Each record is one `record` event
 * whose id is its seq, so a reconnecting EventSource resumes with no gap and no duplicate. A failure of the tail is
 * sent as a `failure` event and ends the stream. Runs until the client leaves or the server closes.
 */
export const streamEvents = async (options: { store: EventStore; sessionId: string; from: number; request: IncomingMessage; response: ServerResponse; streams: Set<() => void> }): Promise<void> => {
  const { store, sessionId, request, response } = options;
  if ((await store.head(sessionId)) === 0) throw new ReinError('SESSION_NOT_FOUND', `no session ${sessionId} in this store`);
  let next = resumeSeq(request, options.from);
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  response.write('retry: 1000\n\n');
  let subscription: Subscription | undefined;
  let stopped = false;
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(keepAlive);
    subscription?.unsubscribe();
    options.streams.delete(stop);
    response.end();
  };
  options.streams.add(stop);
  request.on('close', stop);
  response.on('close', stop);
  const fail = (error: unknown) => {
    if (stopped) return;
    const { code, message } = errorAnswer(error);
    response.write(`event: failure\ndata: ${JSON.stringify({ error: { code, message } })}\n\n`);
    stop();
  };
  try {
    for (;;) {
      const page = await store.read(sessionId, { from: next, limit: HISTORY_PAGE });
      if (stopped) return;
      let text = '';
      for (const record of page) text += eventOf(record);
      if (page.length > 0) next = page[page.length - 1]!.seq + 1;
      if (text !== '' && !response.write(text)) await drained(response);
      if (page.length < HISTORY_PAGE) break;
    }
  } catch (error) {
    fail(error);
    return;
  }
  if (stopped) return;
  subscription = store.tail(sessionId, next).subscribe({
    next: (record) => {
      if (record.seq < next) return;
      next = record.seq + 1;
      response.write(eventOf(record));
    },
    error: fail,
    complete: stop,
  });
};
