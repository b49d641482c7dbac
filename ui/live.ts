import type { PageRecord } from './types.js';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/**
 * Follows a session's records over server-sent events from a seq: each record once, in order. The browser's
 * EventSource reconnects by itself with `Last-Event-ID`; when it gives up (the server was down, or answered an
 * error) the feed opens a new one from the seq after the last it delivered, every second until it is stopped. A
 * record already delivered is dropped, a gap reopens the stream at the missing seq: never a duplicate, never a hole.
 */
export class LiveFeed {
  #source: EventSource | undefined;
  #last: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flush: ReturnType<typeof setTimeout> | undefined;
  #pending: PageRecord[] = [];
  #stopped = false;

  constructor(
    private readonly sessionId: string,
    from: number,
    private readonly deliver: (records: PageRecord[]) => void,
    private readonly onState: (state: LiveState, last: number) => void,
  ) {
    this.#last = from - 1;
    window.reinViewer ??= { live: [], connects: 0 };
  }

  get last(): number {
    return this.#last;
  }

  start(): void {
    this.#open();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#flush);
    this.#source?.close();
    this.#source = undefined;
    this.onState('closed', this.#last);
  }

  #open(): void {
    if (this.#stopped) return;
    this.#source?.close();
    const source = new EventSource(`/api/sessions/${encodeURIComponent(this.sessionId)}/events?from=${this.#last + 1}`);
    this.#source = source;
    this.onState('connecting', this.#last);
    source.onopen = () => {
      window.reinViewer!.connects += 1;
      this.onState('live', this.#last);
    };
    source.addEventListener('record', (event) => {
      const record = JSON.parse((event as MessageEvent<string>).data) as PageRecord;
      if (record.seq <= this.#last) return;
      if (record.seq !== this.#last + 1) {
        // A hole: start again where it is (the server sends from there).
        this.#reopenSoon(0);
        return;
      }
      this.#last = record.seq;
      window.reinViewer!.live.push(record.seq);
      this.#pending.push(record);
      this.#flush ??= setTimeout(() => {
        this.#flush = undefined;
        const batch = this.#pending;
        this.#pending = [];
        this.deliver(batch);
        this.onState('live', this.#last);
      }, 60);
    });
    source.addEventListener('failure', () => this.#reopenSoon(1000));
    source.onerror = () => {
      if (this.#stopped) return;
      this.onState('reconnecting', this.#last);
      // CONNECTING: the browser retries by itself (with Last-Event-ID); CLOSED: it gave up, so the feed retries.
      if (source.readyState === EventSource.CLOSED) this.#reopenSoon(1000);
    };
  }

  #reopenSoon(delayMs: number): void {
    this.#source?.close();
    this.#source = undefined;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#open(), delayMs);
  }
}
