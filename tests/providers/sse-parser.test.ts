import { describe, expect, it } from 'vitest';
import { readSse, SseParser } from '../../src/providers/sse-parser.js';

const parseAll = (text: string) => {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()];
};

describe('SseParser', () => {
  it('dispatches on blank lines, joins data lines, keeps event names and ids', () => {
    expect(parseAll('event: message_start\ndata: {"a":1}\n\ndata: one\ndata: two\nid: 7\n\n')).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { event: 'message', data: 'one\ntwo', id: '7' },
    ]);
  });

  it('accepts CRLF, LF and CR line endings, even split between CR and LF', () => {
    const parser = new SseParser();
    const events = [...parser.push('data: a\r'), ...parser.push('\n\r'), ...parser.push('\ndata: b\r\r'), ...parser.push('data: c\n\n'), ...parser.end()];
    expect(events.map((event) => event.data)).toEqual(['a', 'b', 'c']);
  });

  it('ignores comments, unknown fields and a leading BOM; strips one space after the colon only', () => {
    expect(parseAll('\ufeff: keep-alive\nfoo: bar\ndata:  two spaces\ndata:none\n\n')).toEqual([{ event: 'message', data: ' two spaces\nnone' }]);
  });

  it('does not dispatch an event without data, nor one cut off by the end of the stream', () => {
    expect(parseAll('event: ping\n\ndata: complete\n\ndata: torn')).toEqual([{ event: 'message', data: 'complete' }]);
  });

  it('a field without a colon is a field with an empty value; data: with nothing is an empty event', () => {
    expect(parseAll('data\n\ndata:\n\n')).toEqual([
      { event: 'message', data: '' },
      { event: 'message', data: '' },
    ]);
  });

  it('keeps the last id and a numeric retry on later events', () => {
    expect(parseAll('retry: 3000\nid: 1\ndata: x\n\ndata: y\n\nretry: soon\nid: bad\u0000id\ndata: z\n\n')).toEqual([
      { event: 'message', data: 'x', id: '1', retry: 3000 },
      { event: 'message', data: 'y', id: '1', retry: 3000 },
      { event: 'message', data: 'z', id: '1', retry: 3000 },
    ]);
  });

  it('readSse decodes UTF-8 split inside a character', async () => {
    const bytes = Buffer.from('data: 東京🙂\n\n', 'utf8');
    async function* pieces() {
      for (let index = 0; index < bytes.length; index++) yield bytes.subarray(index, index + 1);
    }
    const events = [];
    for await (const event of readSse(pieces())) events.push(event);
    expect(events).toEqual([{ event: 'message', data: '東京🙂' }]);
  });
});
