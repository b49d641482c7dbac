import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openLevelEventStore } from '../../stores/index.js';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createScriptedProvider, parseScript } from '../../src/providers/scripted-provider.js';
import { createRein } from '../../src/rein.js';
import { defineTool } from '../../src/tools/tool.js';
import { makeTempDir } from '../support/temp-dir.js';
import { flattenRecords } from '../../src/host/step-record.js';

/*
 * The durability rule (docs/architecture.md: *Durability*), proven with an fsync counter injected into the LevelDB store rather than
 * with SIGKILL (the page cache survives a killed process, so a kill cannot see a missing fsync):
 *
 * - every acknowledgement — a record on `records$`, a record a tail (and so `rein run --json`) emits, a resolved
 *   `send` — comes after an fsync that covered that record;
 * - every side-effecting start — a tool that is not read-only — comes after an fsync that covered its intent
 *   (`tool.started`) and everything before it;
 * - effects that may be redone (model calls, read-only tools) may start before their step is durable, which is what
 *   lets appends share fsyncs.
 */

interface Observation {
  seq: number;
  durable: number;
}

describe('the durability rule (sync mode)', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await makeTempDir('rein-durability-rule-');
    await writeFile(join(dir.path, 'a.txt'), 'alpha\n');
  });
  afterEach(() => dir.remove());

  it('acknowledges only fsynced records and starts a mutating tool only after its intent is fsynced', async () => {
    const durable = new Map<string, number>();
    let fsyncs = 0;
    const store = await openLevelEventStore(join(dir.path, '.rein'), {
      onSync: (stream, head) => {
        fsyncs++;
        durable.set(stream, Math.max(durable.get(stream) ?? 0, head));
      },
    });
    let sessionId = '';
    const durableHead = () => durable.get(sessionId) ?? 0;
    const starts: Array<{ intentSeq: number; durable: number; written: number }> = [];
    const stamp = defineTool({
      name: 'stamp',
      description: 'Writes a stamp file (a tool with an outside side effect).',
      parameters: z.object({ text: z.string() }).strict(),
      annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false, requiresConfirmation: false },
      risk: 'write',
      sideEffect: 'workspace-write',
      resumePolicy: 'require-user-confirmation',
      execute: async (input) => {
        const records = await store.read(sessionId);
        const intent = flattenRecords(records).filter((record) => record.type === 'tool.started' && (record.data as { name: string }).name === 'stamp').at(-1)!;
        starts.push({ intentSeq: intent.seq, durable: durableHead(), written: records.length });
        await writeFile(join(dir.path, 'stamp.txt'), input.text);
        return { ok: true, output: 'stamped' };
      },
    });
    const readTool = defineTool({
      name: 'peek',
      description: 'Reads nothing (read-only).',
      parameters: z.object({}).strict(),
      annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false, requiresConfirmation: false },
      risk: 'read',
      sideEffect: 'none',
      resumePolicy: 'rerun-after-check',
      execute: async () => ({ ok: true, output: 'nothing' }),
    });
    const script = parseScript({
      turns: [
        ...Array.from({ length: 6 }, () => ({ text: 'Peeking.', toolCalls: [{ name: 'peek', arguments: {} }] })),
        { text: 'Stamping.', toolCalls: [{ name: 'stamp', arguments: { text: 'one' } }] },
        { text: 'Peeking again.', toolCalls: [{ name: 'peek', arguments: {} }, { name: 'peek', arguments: {} }] },
        { text: 'Stamping again.', toolCalls: [{ name: 'stamp', arguments: { text: 'two' } }] },
        { text: 'Done.' },
      ],
    });
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider(script), tools: [stamp, readTool], permissions: { mode: 'accept-edits', rules: [{ action: 'allow', tool: 'stamp', source: 'pre-approved' }] } });
    const session = await rein.createSession({ task: 'stamp twice' });
    sessionId = session.id;
    const acknowledged: Observation[] = [];
    const tailed: Observation[] = [];
    session.records$.subscribe((record) => acknowledged.push({ seq: record.seq, durable: durableHead() }));
    let tailReached: (seq: number) => Promise<void> = async () => {};
    const tailWaiters: Array<{ seq: number; resolve: () => void }> = [];
    tailReached = (seq) => (tailed.at(-1)?.seq ?? 0) >= seq ? Promise.resolve() : new Promise((resolve) => tailWaiters.push({ seq, resolve }));
    const tail = store.tail(sessionId).subscribe((record: RecordEnvelope) => {
      tailed.push({ seq: record.seq, durable: durableHead() });
      for (const waiter of tailWaiters) if (record.seq >= waiter.seq) waiter.resolve();
    });
    const fsyncsBefore = fsyncs;
    await session.send('stamp twice');
    const sent = (await store.read(sessionId)).find((record) => record.type === 'user.message')!;
    expect(durableHead()).toBeGreaterThanOrEqual(sent.seq);
    const result = await session.whenQuiet();
    expect(result.status).toBe('completed');
    await tailReached(result.head);
    tail.unsubscribe();

    // Every acknowledgement came after the fsync that covered it, and nothing written went unacknowledged.
    expect(acknowledged.length).toBeGreaterThan(40);
    for (const entry of acknowledged) expect(entry.seq, `records$ acknowledged seq ${entry.seq} before it was fsynced`).toBeLessThanOrEqual(entry.durable);
    expect(acknowledged.map((entry) => entry.seq)).toEqual(acknowledged.map((_, index) => acknowledged[0]!.seq + index));
    expect(acknowledged.at(-1)!.seq).toBe(result.head);
    for (const entry of tailed) expect(entry.seq, `a tail emitted seq ${entry.seq} before it was fsynced`).toBeLessThanOrEqual(entry.durable);
    expect(tailed.at(-1)?.seq).toBe(result.head);
    expect(durableHead()).toBe(result.head);

    // Each mutating start saw its intent (and every record before it) on stable storage.
    expect(starts).toHaveLength(2);
    for (const start of starts) {
      expect(start.durable).toBeGreaterThanOrEqual(start.intentSeq);
      expect(start.durable).toBe(start.written);
    }

    // Appends shared fsyncs: fewer fsyncs than acknowledged steps (the count is reported, the timing is not asserted).
    const steps = (await store.read(sessionId)).filter((record) => ['user.message', 'model.responded', 'tool.settled'].includes(record.type)).length;
    expect(fsyncs - fsyncsBefore).toBeGreaterThan(0);
    expect(steps).toBeGreaterThan(20);
    await store.close();
  });

  it('relaxed mode acknowledges at write and leaves the fsyncs to its group commit, except a mutating intent', async () => {
    let fsyncs = 0;
    const store = await openLevelEventStore(join(dir.path, '.rein'), { durability: 'relaxed', groupCommitIntervalMs: 60_000, onSync: () => fsyncs++ });
    const script = parseScript({ turns: [{ text: 'Reading.', toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }, { text: 'Writing.', toolCalls: [{ name: 'write', arguments: { path: 'b.txt', content: 'bee\n' } }] }, { text: 'Done.' }] });
    const rein = await createRein({ store, workspace: dir.path, provider: createScriptedProvider(script), permissions: { mode: 'accept-edits' } });
    const session = await rein.startSession({ task: 'write b.txt' });
    expect((await session.whenQuiet()).status).toBe('completed');
    // One fsync: the write tool's intent. Everything else waits for the group commit (here: the close).
    expect(fsyncs).toBe(1);
    await store.close();
    expect(fsyncs).toBeGreaterThanOrEqual(2);
  });
});
