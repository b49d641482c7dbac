import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelEventStore } from '../../stores/index.js';
import type { LevelEventStore } from '../../stores/index.js';
import { artifactRef, blake3Hex } from '../../stores/blob-hash.js';
import { MAX_DELTA_DEPTH } from '../../stores/blob-deltas.js';
import { BLOB_KEYS, DELTA_KEYS, deltaKey } from '../../stores/level-keys.js';
import { STREAM_DATABASE_OPTIONS } from '../../stores/level-stream.js';
import { draft, expectCode, temporaryDirectory } from './store-test-support.js';

let parent: { path: string; remove(): Promise<void> };
let counter = 0;
const freshRoot = (): string => join(parent.path, `store-${++counter}`);

beforeAll(async () => {
  parent = await temporaryDirectory('rein-blob-deltas-');
});
afterAll(async () => {
  await parent.remove();
});

/** A model input like the ones a session appends: the same rules and tools, a sliding window of recent turns. */
const modelInput = (turn: number): string =>
  JSON.stringify({
    system: 'You are rein, a careful coding agent. '.repeat(20),
    state: `model turns so far: ${turn}`,
    recent: Array.from({ length: 20 }, (_, index) => `#${(turn - index) * 21} turn ${turn - index}: "go" → noop() ok`),
    tools: [{ name: 'noop', description: 'Does nothing.', inputSchema: { type: 'object', properties: {} } }],
  });

/** Appends one record per blob, each carrying its blob; resolves the refs in order. */
const appendBlobs = async (store: LevelEventStore, stream: string, blobs: readonly string[]): Promise<string[]> => {
  const refs: string[] = [];
  for (const blob of blobs) {
    const head = await store.head(stream);
    await store.append(stream, [draft(head + 1)], { expectedSeq: head, blobs: [blob] });
    refs.push(artifactRef(await blake3Hex(Buffer.from(blob, 'utf8'))));
  }
  return refs;
};

const keysOf = async (root: string, stream: string): Promise<{ whole: string[]; deltas: string[] }> => {
  const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', stream), { ...STREAM_DATABASE_OPTIONS });
  await database.open();
  try {
    return { whole: await database.keys(BLOB_KEYS).all(), deltas: await database.keys(DELTA_KEYS).all() };
  } finally {
    await database.close();
  }
};

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

describe('stream blobs stored as deltas', () => {
  it('stores each similar blob as a small delta against the one before, and reads every one back exactly', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    const inputs = Array.from({ length: 40 }, (_, index) => modelInput(index + 30));
    const refs = await appendBlobs(store, 's', inputs);
    for (const [index, ref] of refs.entries()) expect(text(await store.readBlob('s', ref))).toBe(inputs[index]);
    await store.close();
    const { whole, deltas } = await keysOf(root, 's');
    // A chain is at most MAX_DELTA_DEPTH deltas long, then a blob is stored whole again.
    expect(whole.length).toBe(Math.ceil(40 / (MAX_DELTA_DEPTH + 1)));
    expect(deltas.length).toBe(40 - whole.length);
    const reopened = await openLevelEventStore(root);
    for (const [index, ref] of refs.entries()) expect(text(await reopened.readBlob('s', ref))).toBe(inputs[index]);
    // After a reopen the chain starts again from a whole blob.
    const [next] = await appendBlobs(reopened, 's', [modelInput(99)]);
    expect(text(await reopened.readBlob('s', next!))).toBe(modelInput(99));
    await reopened.close();
    expect((await keysOf(root, 's')).whole.length).toBe(whole.length + 1);
  });

  it('never rewrites a blob the stream holds, so alternating blobs cannot make a chain loop', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    const [first, second] = [modelInput(1), modelInput(2)];
    const refs = await appendBlobs(store, 's', [first, second, first, second, first]);
    await store.close();
    expect((await keysOf(root, 's')).whole.length + (await keysOf(root, 's')).deltas.length).toBe(2);
    const reopened = await openLevelEventStore(root);
    expect(text(await reopened.readBlob('s', refs[4]!))).toBe(first);
    expect(text(await reopened.readBlob('s', refs[3]!))).toBe(second);
    await reopened.close();
  });

  it('knows a blob stored before the store reopened, and rewrites none of them', async () => {
    const root = freshRoot();
    const [first, second, third] = [modelInput(1), modelInput(2), modelInput(3)];
    const store = await openLevelEventStore(root);
    await appendBlobs(store, 's', [first, second]);
    await store.close();
    const reopened = await openLevelEventStore(root);
    const refs = await appendBlobs(reopened, 's', [third, second, first, third]);
    await reopened.close();
    const { whole, deltas } = await keysOf(root, 's');
    expect(whole.length + deltas.length).toBe(3);
    const again = await openLevelEventStore(root);
    for (const [index, content] of [third, second, first, third].entries()) expect(text(await again.readBlob('s', refs[index]!))).toBe(content);
    await again.close();
  });

  it('appends a blob it has never stored without reading the database for it', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    await appendBlobs(store, 's', [modelInput(1)]);
    const getMany = ClassicLevel.prototype.getMany;
    let reads = 0;
    ClassicLevel.prototype.getMany = function (this: ClassicLevel<string, Uint8Array>, ...args: Parameters<typeof getMany>) {
      reads++;
      return getMany.apply(this, args);
    } as typeof getMany;
    try {
      await appendBlobs(store, 's', Array.from({ length: 20 }, (_, index) => modelInput(index + 2)));
    } finally {
      ClassicLevel.prototype.getMany = getMany;
    }
    expect(reads).toBe(0);
    await store.close();
  });

  it('reads a damaged link as BLOB_CORRUPT for every blob built on it, and the blobs before it still read', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    const inputs = Array.from({ length: 6 }, (_, index) => modelInput(index + 10));
    const refs = await appendBlobs(store, 's', inputs);
    await store.close();
    const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await database.open();
    const key = deltaKey(refs[3]!.slice('artifact://blake3/'.length));
    const stored = Uint8Array.from((await database.get(key))!);
    stored[stored.length - 1] = stored[stored.length - 1]! ^ 0x01;
    await database.put(key, stored);
    await database.close();
    const reopened = await openLevelEventStore(root);
    for (const index of [0, 1, 2]) expect(text(await reopened.readBlob('s', refs[index]!))).toBe(inputs[index]);
    for (const index of [3, 4, 5]) await expectCode(reopened.readBlob('s', refs[index]!), 'BLOB_CORRUPT');
    await reopened.close();
  });

  it('go with a fork, and a fork reads them', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    const inputs = Array.from({ length: 5 }, (_, index) => modelInput(index + 50));
    const refs = await appendBlobs(store, 's', inputs);
    const fork = await store.fork('s', 5, { newStream: 's-fork' });
    for (const [index, ref] of refs.entries()) expect(text(await store.readBlob(fork.stream, ref))).toBe(inputs[index]);
    await store.close();
  });

  it('are written to a stream an earlier build created (codec /2) once an append upgraded it: its meta says /4, which that build refuses whole', async () => {
    const root = freshRoot();
    const store = await openLevelEventStore(root);
    await store.append('s', [draft(1)], { expectedSeq: 0 });
    await store.close();
    const database = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await database.open();
    const meta = JSON.parse(Buffer.from((await database.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
    meta.codec.id = 'rein.msgpackr2-plain.crc32/2';
    await database.put('m!meta', Buffer.from(JSON.stringify(meta)));
    await database.close();
    const reopened = await openLevelEventStore(root);
    const inputs = [modelInput(1), modelInput(2), modelInput(3)];
    const refs = await appendBlobs(reopened, 's', inputs);
    for (const [index, ref] of refs.entries()) expect(text(await reopened.readBlob('s', ref))).toBe(inputs[index]);
    await reopened.close();
    const { whole, deltas } = await keysOf(root, 's');
    expect(whole.length + deltas.length).toBe(3);
    expect(deltas.length).toBeGreaterThan(0);
    const check = new ClassicLevel<string, Uint8Array>(join(root, 'streams', 's'), { ...STREAM_DATABASE_OPTIONS });
    await check.open();
    const upgraded = JSON.parse(Buffer.from((await check.get('m!meta'))!).toString('utf8')) as { codec: { id: string } };
    await check.close();
    expect(upgraded.codec.id).toBe('rein.msgpackr2-plain.crc32/4');
  });

  it('give back exactly what was appended, whatever the blobs and however often the store reopens', async () => {
    const base = modelInput(7);
    const blob = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.tuple(fc.nat({ max: base.length }), fc.string({ maxLength: 40 })).map(([at, insert]) => base.slice(0, at) + insert + base.slice(at)),
      fc.constant(base),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(blob, fc.boolean()), { minLength: 1, maxLength: 24 }), async (steps) => {
        const root = freshRoot();
        let store = await openLevelEventStore(root);
        const appended: Array<[string, string]> = [];
        try {
          for (const [content, reopen] of steps) {
            const [ref] = await appendBlobs(store, 's', [content]);
            appended.push([ref!, content]);
            if (reopen) {
              await store.close();
              store = await openLevelEventStore(root);
            }
          }
          for (const [ref, content] of appended) expect(text(await store.readBlob('s', ref))).toBe(content);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});

describe('a delta that would inflate past the largest blob stored as one', () => {
  it('is refused rather than inflated without bound', async () => {
    const { applyDelta, MAX_DELTA_BLOB_BYTES } = await import('../../stores/blob-deltas.js');
    const { deflateRawSync } = await import('node:zlib');
    const bomb = deflateRawSync(Buffer.alloc(MAX_DELTA_BLOB_BYTES + 1));
    expect(() => applyDelta(Buffer.from('base'), bomb)).toThrow();
    expect(Buffer.from(applyDelta(Buffer.from('base'), deflateRawSync(Buffer.from('base base'), { dictionary: Buffer.from('base') }))).toString()).toBe('base base');
  });
});

describe('a delta of a blob past zlib’s 32 KiB window', () => {
  /** A model input whose history only grows: the same rules and tools, one more turn each round, the state at the end. */
  const growing = (turns: number): string =>
    JSON.stringify({ messages: ['You are rein. '.repeat(40), ...Array.from({ length: turns }, (_, index) => `turn ${index}: "go" → noop() ok #${index * 4 + 7} ${'x'.repeat(index % 97)}`), `state: ${turns} turns`], tools: [{ name: 'noop', description: 'Does nothing.' }] });

  it('records the prefix it shares with its base and stays small however long the history grew', async () => {
    const { deltaOf, applyDelta, sharedPrefix } = await import('../../stores/blob-deltas.js');
    const base = Buffer.from(growing(1_500));
    const next = Buffer.from(growing(1_501));
    expect(base.length).toBeGreaterThan(100_000);
    const delta = deltaOf(base, next)!;
    expect(delta.prefix).toBe(sharedPrefix(base, next));
    expect(delta.prefix).toBeGreaterThan(base.length - 200);
    // A deflate of the whole input against the base as dictionary (zlib sees its last 32 KiB only) was ~1 KB here.
    expect(delta.delta.length).toBeLessThan(200);
    expect(Buffer.from(applyDelta(base, delta.delta, delta.prefix)).equals(next)).toBe(true);
  });

  it('reads back exactly through a chain, on disk and after a reopen', async () => {
    const root = freshRoot();
    let store = await openLevelEventStore(root);
    try {
      const blobs = Array.from({ length: 20 }, (_, index) => growing(1_200 + index));
      const refs = await appendBlobs(store, 's', blobs);
      await store.close();
      expect((await keysOf(root, 's')).deltas.length).toBeGreaterThan(0);
      store = await openLevelEventStore(root);
      for (const [index, ref] of refs.entries()) expect(text(await store.readBlob('s', ref))).toBe(blobs[index]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('a stored delta with a malformed prefix is damage, and one written without a prefix still reads', async () => {
    const { decodeBlobDelta, encodeBlobDelta, applyDelta } = await import('../../stores/blob-deltas.js');
    const { encodeFramed } = await import('../../stores/record-codec.js');
    const { BLOB_DELTA_FORMAT_BYTE } = await import('../../stores/blob-deltas.js');
    const { deflateRawSync } = await import('node:zlib');
    const hex = 'a'.repeat(64);
    expect(() => decodeBlobDelta(encodeFramed(BLOB_DELTA_FORMAT_BYTE, [hex, new Uint8Array([1]), -1]), 's')).toThrow(/wrong shape/);
    expect(() => decodeBlobDelta(encodeFramed(BLOB_DELTA_FORMAT_BYTE, [hex, new Uint8Array([1]), 'x']), 's')).toThrow(/wrong shape/);
    const old = decodeBlobDelta(encodeBlobDelta(hex, deflateRawSync(Buffer.from('base base'), { dictionary: Buffer.from('base') })), 's');
    expect(old.prefix).toBeUndefined();
    expect(Buffer.from(applyDelta(Buffer.from('base'), old.delta, old.prefix)).toString()).toBe('base base');
    expect(() => applyDelta(Buffer.from('base'), old.delta, 10)).toThrow();
  });

  it('is made against the end of the dictionary a read inflates with, and reads back exactly whatever the edit', async () => {
    const { deltaOf, applyDelta } = await import('../../stores/blob-deltas.js');
    const runs = Number(process.env.FC_RUNS ?? 50);
    // A base of any length (across the 32 KiB window), edited anywhere: a shared prefix of any length, a changed or
    // dropped middle, any tail. A delta made against a suffix of the reader's dictionary with a smaller window must
    // inflate to the same bytes with the reader's whole dictionary.
    const base = fc.integer({ min: 0, max: 80_000 }).chain((length) =>
      fc.record({
        length: fc.constant(length),
        seed: fc.integer({ min: 0, max: 1_000 }),
        cut: fc.integer({ min: 0, max: length }),
        dropped: fc.integer({ min: 0, max: 5_000 }),
        inserted: fc.string({ maxLength: 3_000 }),
      }),
    );
    fc.assert(
      fc.property(base, ({ length, seed, cut, dropped, inserted }) => {
        const baseBytes = Buffer.from(Array.from({ length: Math.ceil(length / 40) + 1 }, (_, index) => `turn ${index + seed}: "go" → noop() ok;`).join('')).subarray(0, length);
        const next = Buffer.concat([baseBytes.subarray(0, cut), Buffer.from(inserted), baseBytes.subarray(Math.min(baseBytes.length, cut + dropped))]);
        const delta = deltaOf(baseBytes, next);
        if (delta === undefined) return;
        expect(Buffer.from(applyDelta(baseBytes, delta.delta, delta.prefix)).equals(next)).toBe(true);
      }),
      { numRuns: runs * 4 },
    );
  });
});
