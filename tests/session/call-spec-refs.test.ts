import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import type { ModelResponded } from '../../models/model.records.js';
import { ReinRecordSchema } from '../../models/records.js';
import { runDelegation } from '../../scripts/bench/delegation.bench.js';
import { createMemoryEventStore, openLevelEventStore } from '../../stores/index.js';
import { createCallSpecResolver, resolveCallSpecs } from '../../stores/call-spec-refs.js';
import type { EventStore } from '../../stores/event-store.js';
import { verifyRecords } from '../../src/host/replay.js';
import { readSessionRecords } from '../../src/session/read-session.js';
import { replaySession } from '../../src/session/replay-session.js';
import { digestOf } from '../../machines/typestate/digest.js';
import { makeTempDir } from '../support/temp-dir.js';

const repliesOf = (records: readonly RecordEnvelope[]) => records.filter((record) => record.type === 'model.responded').map((record) => ({ record, data: record.data as ModelResponded }));

/** A delegation of `count` children on `store`: its stream, read as stored. */
const delegated = async (count: number, open: (directory: string) => Promise<EventStore>) => {
  const workspace = await makeTempDir();
  await writeFile(join(workspace.path, 'a.txt'), 'alpha\n');
  const store = await open(workspace.path);
  await runDelegation(count, store, workspace.path);
  const [stream] = await store.streams();
  return { store, id: stream!.stream, stored: await store.read(stream!.stream), cleanup: async () => { await store.close(); await workspace.remove(); } };
};

describe('a CallSpec every child repeats is stored once per stream (model.responded v2)', () => {
  for (const [name, open] of [
    ['memory', async () => createMemoryEventStore()],
    ['LevelDB', async (directory: string) => openLevelEventStore(join(directory, '.rein'), { durability: 'relaxed' })],
  ] as const) {
    it(`${name}: the children's specs are references to the first child's, read back whole, and the log replays`, async () => {
      const { store, id, stored, cleanup } = await delegated(6, open);
      try {
        const replies = repliesOf(stored);
        const children = replies.filter(({ record }) => record.actor !== 'root');
        expect(children).toHaveLength(6);
        // Each spec's members are stored whole once (the first child with them, in log order: the children's budget
        // shares make at most a few differ, by their turns), and every other child refers to them.
        const bases = new Map<string, Record<string, unknown>>();
        for (const { data } of children) {
          if (data.callSpec !== undefined) {
            expect(data.callSpecRef).toBeUndefined();
            const { callId: _callId, ...members } = data.callSpec;
            expect(data.callSpecBase).toBe(digestOf(members));
            expect(bases.has(data.callSpecBase!)).toBe(false);
            bases.set(data.callSpecBase!, members);
          } else {
            expect(data.callSpecRef).toEqual({ callId: data.effectId, base: expect.any(String) });
            expect(bases.has(data.callSpecRef!.base)).toBe(true);
          }
        }
        expect(bases.size).toBeLessThanOrEqual(2);
        expect(children.filter(({ data }) => data.callSpecRef !== undefined).length).toBeGreaterThanOrEqual(4);
        // Every stored record is a valid record of its type (v2).
        for (const record of stored) expect(ReinRecordSchema.safeParse(record).success).toBe(true);
        // A reader gets every spec whole: the members its reference names, its own call id.
        const read = repliesOf(await readSessionRecords(store, id)).filter(({ record }) => record.actor !== 'root');
        read.forEach(({ data }, index) => {
          const storedData = children[index]!.data;
          expect(data.callSpecRef).toBeUndefined();
          expect(data.callSpec).toEqual(storedData.callSpec ?? { callId: data.effectId, ...bases.get(storedData.callSpecRef!.base) });
        });
        // Replay regenerates each turn's CallSpec digest from the spec it reads back: a wrong resolution diverges.
        const replay = await replaySession(store, id);
        expect(replay.inputs).toBeGreaterThan(12);
        // Raw records replay too (the resolution is part of replay).
        verifyRecords(id, stored).tree?.stop();
      } finally {
        await cleanup();
      }
    });
  }

  it('a reference whose whole spec is not among the records read is left as it is; records without one are returned as they are', async () => {
    const { stored, cleanup } = await delegated(3, async () => createMemoryEventStore());
    try {
      const firstRef = stored.findIndex((record) => record.type === 'model.responded' && (record.data as ModelResponded).callSpecRef !== undefined);
      const tail = stored.slice(firstRef);
      expect(resolveCallSpecs(tail)[0]).toBe(tail[0]);
      const none = stored.filter((record) => record.type !== 'model.responded');
      expect(resolveCallSpecs(none)).toBe(none);
      // Resolving twice changes nothing.
      const once = resolveCallSpecs(stored);
      expect(resolveCallSpecs(once)).toBe(once);
      // Record by record (a live feed from seq 1), the same records; a record without a reference is the one given.
      const resolve = createCallSpecResolver();
      const fed = stored.map((record) => resolve(record));
      expect(fed).toEqual(once);
      fed.forEach((record, index) => {
        if (once[index] === stored[index]) expect(record).toBe(stored[index]);
      });
      expect(fed.filter((record) => record.type === 'model.responded').every((record) => (record.data as ModelResponded).callSpec !== undefined)).toBe(true);
    } finally {
      await cleanup();
    }
  });
});
