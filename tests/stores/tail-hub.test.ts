import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { TailHub } from '../../stores/tail-hub.js';

/** A stream of `head` records whose reads take `delayMs` each (a store that reads behind its appends). */
const slowStream = (records: { head: number }, delayMs: number) => async (_stream: string, options: { from?: number; limit?: number }): Promise<RecordEnvelope[]> => {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const from = options.from ?? 1;
  const to = Math.min(records.head, from + (options.limit ?? 1000) - 1);
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => ({ seq: from + index }) as RecordEnvelope);
};

describe('TailHub.delivered', () => {
  it('resolves only once every tail has handed its subscriber every record up to the seq', async () => {
    const records = { head: 0 };
    const hub = new TailHub(slowStream(records, 5));
    const first: number[] = [];
    const second: number[] = [];
    const a = hub.tail('s').subscribe((record) => first.push(record.seq));
    records.head = 20;
    hub.notify('s');
    const b = hub.tail('s', 5).subscribe((record) => second.push(record.seq));
    records.head = 34;
    hub.notify('s');
    await hub.delivered('s', 34);
    expect(first).toEqual(Array.from({ length: 34 }, (_, index) => index + 1));
    expect(second).toEqual(Array.from({ length: 30 }, (_, index) => index + 5));
    a.unsubscribe();
    b.unsubscribe();
  });

  it('does not wait for records that are not readable, nor for a stream without tails', async () => {
    const records = { head: 3 };
    const hub = new TailHub(slowStream(records, 1));
    await hub.delivered('none', 10);
    const seen: number[] = [];
    const subscription = hub.tail('s').subscribe((record) => seen.push(record.seq));
    await hub.delivered('s', 10);
    expect(seen).toEqual([1, 2, 3]);
    subscription.unsubscribe();
  });
});
