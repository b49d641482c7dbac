import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { firstValueFrom, filter, type Subscription } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { openLevelEventStore } from '../../stores/index.js';
import { makeTempDir } from '../support/temp-dir.js';

const draft = (index: number) => ({ id: `r${index}`, type: 'user.message', v: 1, at: index, actor: 'root', data: { text: `m${index}` } });

/** Collects a tail's records and resolves `until(seq)` once the record `seq` has arrived. */
const collect = (tail: ReturnType<Awaited<ReturnType<typeof openLevelEventStore>>['tail']>) => {
  const seen: number[] = [];
  const waiters: Array<{ seq: number; done: () => void; fail: (error: unknown) => void }> = [];
  let failure: unknown;
  const subscription: Subscription = tail.subscribe({
    next: (record: RecordEnvelope) => {
      seen.push(record.seq);
      for (const waiter of waiters.filter((entry) => entry.seq <= record.seq)) waiter.done();
    },
    error: (error: unknown) => {
      failure = error;
      for (const waiter of waiters) waiter.fail(error);
    },
  });
  return {
    seen,
    subscription,
    /** Fail whoever waits (the writer is gone). */
    fail: (error: unknown) => {
      failure ??= error;
      for (const waiter of waiters) waiter.fail(error);
    },
    until: (seq: number) => (seen.includes(seq) ? Promise.resolve() : failure !== undefined ? Promise.reject(failure) : new Promise<void>((done, fail) => waiters.push({ seq, done, fail }))),
  };
};

const built = new URL('../../dist/stores/index.js', import.meta.url).href;

/** A separate Node process that owns the store's stream `s` and appends one record per line it reads, printing `ack <seq>`. */
const WRITER = `
const { openLevelEventStore } = await import(process.env.BUILT_STORE_URL);
const store = await openLevelEventStore(process.env.STORE_ROOT);
let head = await store.head('s');
const draft = (index) => ({ id: 'c' + index, type: 'user.message', v: 1, at: index, actor: 'root', data: { text: 'child ' + index } });
process.stdin.setEncoding('utf8');
let buffered = '';
// One append at a time, in the order the lines came (a line may arrive before the previous append resolved).
let queue = Promise.resolve();
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  while (buffered.includes('\\n')) {
    buffered = buffered.slice(buffered.indexOf('\\n') + 1);
    queue = queue.then(async () => {
      await store.append('s', [draft(head + 1)], { expectedSeq: head });
      head += 1;
      process.stdout.write('ack ' + head + '\\n');
    });
  }
});
process.stdin.on('end', () => { queue = queue.then(async () => { await store.close(); process.exit(0); }); });
process.stdout.write('ready\\n');
`;

describe('a LevelDB tail follows appends made elsewhere', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('a second store object over the same directory sees the first one’s appends live, with no gap and no duplicate', async () => {
    const directory = await makeTempDir('rein-follow-');
    cleanups.push(directory.remove);
    const root = join(directory.path, '.rein');
    const writer = await openLevelEventStore(root);
    await writer.append('s', [draft(1), draft(2)], { expectedSeq: 0 });
    for (const readOnly of [false, true]) {
      const reader = await openLevelEventStore(root, { readOnly, followIntervalMs: 50 });
      const tail = collect(reader.tail('s', 2));
      await tail.until(2);
      const head = await writer.head('s');
      await writer.append('s', [draft(head + 1)], { expectedSeq: head });
      await tail.until(head + 1);
      await writer.append('s', [draft(head + 2), draft(head + 3)], { expectedSeq: head + 1 });
      await tail.until(head + 3);
      expect(tail.seen).toEqual(Array.from({ length: head + 2 }, (_, index) => index + 2));
      tail.subscription.unsubscribe();
      await reader.close();
    }
    await writer.close();
  });

  it('a tail in this process sees the records another process appends to a stream it holds', async () => {
    const directory = await makeTempDir('rein-follow-child-');
    cleanups.push(directory.remove);
    const root = join(directory.path, '.rein');
    const seed = await openLevelEventStore(root);
    await seed.append('s', [draft(1)], { expectedSeq: 0 });
    await seed.close();
    const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER], { env: { ...process.env, BUILT_STORE_URL: built, STORE_ROOT: root }, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      child.stdin.end();
      await exited;
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', () => output.includes('ready') && resolve());
      void exited.then((code) => reject(new Error(`the writer process exited (${String(code)}) before it was ready`)));
    });

    const reader = await openLevelEventStore(root);
    const tail = collect(reader.tail('s', 1));
    void exited.then((code) => tail.fail(new Error(`the writer process exited (${String(code)})`)));
    await tail.until(1);
    for (const seq of [2, 3, 4]) {
      child.stdin.write('append\n');
      await tail.until(seq);
    }
    expect(tail.seen).toEqual([1, 2, 3, 4]);
    // The reader never took the stream: the other process still owns it and appends on.
    child.stdin.write('append\n');
    await tail.until(5);
    expect((await firstValueFrom(reader.tail('s', 5).pipe(filter((record) => record.seq === 5)))).data).toEqual({ text: 'child 5' });
    tail.subscription.unsubscribe();
    await reader.close();
  });
});
