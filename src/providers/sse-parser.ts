/** One dispatched server-sent event. `event` is `message` when the stream named no type. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

/**
 * An incremental parser for the `text/event-stream` format (WHATWG HTML §9.2): lines end in CRLF, LF or CR, `data`
 * lines accumulate, a blank line dispatches, `:` starts a comment, a leading BOM is dropped. Text may be pushed
 * in pieces split anywhere (even between CR and LF); an event still open when the stream ends is discarded, as the
 * specification says. Decoding bytes is the caller's job (`readSse` uses a streaming `TextDecoder`).
 */
export class SseParser {
  private pending = '';
  private data = '';
  private hasData = false;
  private eventType = '';
  private lastId: string | undefined;
  private retry: number | undefined;
  private first = true;

  /** Feed decoded text; returns the events completed by it, in order. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let buffer = this.pending.length > 0 ? this.pending + text : text;
    if (this.first && buffer.length > 0) {
      this.first = false;
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
    }
    let start = 0;
    let carriage = buffer.indexOf('\r');
    for (;;) {
      const feed = buffer.indexOf('\n', start);
      if (carriage !== -1 && carriage < start) carriage = buffer.indexOf('\r', start);
      let end: number;
      let next: number;
      if (carriage !== -1 && (feed === -1 || carriage < feed)) {
        // A CR at the very end may be the first half of a CRLF: wait for the next piece to decide.
        if (carriage === buffer.length - 1) break;
        end = carriage;
        next = buffer.charCodeAt(carriage + 1) === 10 ? carriage + 2 : carriage + 1;
      } else if (feed !== -1) {
        end = feed;
        next = feed + 1;
      } else {
        break;
      }
      this.line(buffer.slice(start, end), events);
      start = next;
    }
    this.pending = start === 0 ? buffer : buffer.slice(start);
    return events;
  }

  /** The stream ended: a trailing unterminated line is processed, an undispatched event is dropped. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.pending.length > 0) {
      const rest = this.pending.endsWith('\r') ? this.pending.slice(0, -1) : this.pending;
      this.pending = '';
      this.line(rest, events);
    }
    this.data = '';
    this.hasData = false;
    this.eventType = '';
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line.length === 0) {
      this.dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' — a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.data = this.hasData ? `${this.data}\n${value}` : value;
      this.hasData = true;
    } else if (field === 'event') {
      this.eventType = value;
    } else if (field === 'id') {
      if (!value.includes('\u0000')) this.lastId = value;
    } else if (field === 'retry') {
      if (/^\d+$/.test(value)) this.retry = Number(value);
    }
  }

  private dispatch(events: SseEvent[]): void {
    if (!this.hasData) {
      this.eventType = '';
      return;
    }
    const event: SseEvent = { event: this.eventType || 'message', data: this.data };
    if (this.lastId !== undefined) event.id = this.lastId;
    if (this.retry !== undefined) event.retry = this.retry;
    events.push(event);
    this.data = '';
    this.hasData = false;
    this.eventType = '';
  }
}

/**
 * Read a byte stream as server-sent events. Bytes are decoded with one streaming UTF-8 decoder, so a character
 * split across chunks is never corrupted. Errors of the underlying stream (abort, reset) propagate to the caller.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  for await (const chunk of body) {
    for (const event of parser.push(decoder.decode(chunk, { stream: true }))) yield event;
  }
  for (const event of parser.push(decoder.decode())) yield event;
  for (const event of parser.end()) yield event;
}
